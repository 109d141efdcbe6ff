"""Whether a queued run has anyone to take it: said on its page rather than left waiting silently."""
from runs.fleet.asking import current_fleet
from runs.training_runs.models import Run, RunStatus
from worker.broker import DEFAULT_QUEUE


def run_pool(run: Run) -> str:
    return (run.config or {}).get("worker_pool") or DEFAULT_QUEUE


def waiting_note(run: Run) -> str | None:
    """Why a queued run may wait for ever: no live worker listens on its pool, or the broker cannot be
    asked. None when a worker listens, and for runs that are not queued (the broker is not asked)."""
    if run.status != RunStatus.QUEUED:
        return None
    fleet, pool = current_fleet(), run_pool(run)
    if not fleet.reachable:
        return f"Whether a worker listens on pool {pool!r} is unknown: {fleet.broker_problem}."
    if not fleet.on_pool(pool):
        return f"No live worker listens on pool {pool!r}: the run waits until one starts on it."
    return None
