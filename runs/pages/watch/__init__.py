"""Runs: the list, the new-run form and the live run page."""
