"""Runs: the list, the new-run form, the live run page and its buttons."""
