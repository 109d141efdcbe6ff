"""Checks a run's recent signals after each batch of metrics (being built: see runs/alarms/__init__)."""


def watch_signals(run, steps: list[int]) -> None:
    """Raises the alarms the points just stored at `steps` trip."""
