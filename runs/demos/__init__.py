"""The one-click demo runs of the home page."""
