"""Comparing 2 to 8 runs side by side."""
