"""Comparing runs: what differs in their settings, and their metric series on one x axis."""
