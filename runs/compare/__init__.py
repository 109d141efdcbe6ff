"""Comparing runs: what differs in their settings, their metric series on one x axis, samples side
by side; the API and the compare page."""
