"""One way a queued dry run is asked and done, of a reward or of an environment.

The request stores the row in a place of the account's (limits.py) and sends the task once its
transaction commits; the consumer checks again that its machine can do it (it may differ from the
web server's), marks it loading, lets the kind do the work (which writes how far it is), and
finishes it with the result, or fails it saying why. A row already finished (a message delivered
twice) or deleted is left alone; one lost by its consumer is failed later (runs/dry_runs/models.py).
What differs between the kinds is a DryRunJob: a reward's rows scored (runs/rewards/model_dry_run.py),
an environment's episode played by the model (runs/environments/model_dry_run.py).
"""
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from runs.background.limits import Kind, place_for
from runs.background.tasks import enqueue
from runs.dry_runs.models import DryRun

D = TypeVar("D", bound=DryRun)


def stopped(exc: Exception) -> str:
    return f"the dry run stopped: {type(exc).__name__}: {exc}"


@dataclass(frozen=True)
class DryRunJob(Generic[D]):
    task: str  # the consumer's task: its name is in messages already sent, keep it
    table: type[D]
    places: Kind  # how many the account may have unfinished
    problem: Callable[[D], str | None]  # why this machine cannot do it, or None
    work: Callable[[D], dict]  # does it, marking its progress; the result
    failure: Callable[[Exception], str] = stopped  # what the row says when the work raised


def ask(job: DryRunJob[D], subject, user, asked: dict, **fields) -> D:
    """Stores the dry run and has it done once the request's transaction commits; UnfinishedLimitReached
    (nothing stored) when the account has no place left."""
    with place_for(job.places, user):
        dry_run = job.table.ask(subject, user, asked, **fields)
        enqueue(job.task, dry_run.pk)
    return dry_run


def run(job: DryRunJob[D], dry_run_id: int) -> None:
    """Does a dry run not finished yet; one delivered again after a lost consumer is done again."""
    dry_run = job.table._default_manager.select_related(job.table.SUBJECT).filter(pk=dry_run_id).first()
    if dry_run is None or dry_run.finished:
        return
    if reason := job.problem(dry_run):
        dry_run.fail(reason)
        return
    dry_run.mark_loading()
    try:
        result = job.work(dry_run)
    except Exception as exc:  # noqa: BLE001 (whatever stopped it is what the page shows)
        dry_run.fail(job.failure(exc))
        return
    dry_run.finish(result)
