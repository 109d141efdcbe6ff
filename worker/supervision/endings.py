"""How a run ended, in the words the run's log and its reason give it.

The watch (watch.py) and the checks before anything starts (refusals.py) decide how a run ended;
an `Ending` says it: a failure's cause first, as an error line in the log and as the run's reason,
then the last lines of whichever child died. A trainer that finished reports its own ending.
"""
from collections.abc import Sequence
from dataclasses import dataclass

from worker.trainer.distributed.launch_failure import first_failure
from worker.trainer.processes.groups import ended_how
from worker.trainer.reporting.session import ReportingSession

FINISHED, FAILED, CANCELLED = "finished", "failed", "cancelled"


@dataclass(frozen=True)
class Ending:
    """The word RunSupervisor.run returns, and what the supervisor reports of it."""
    outcome: str
    reason: str = ""
    last_lines: tuple[str, ...] = ()

    @classmethod
    def failed(cls, how: str, last_lines: Sequence[str] = ()) -> "Ending":
        return cls(FAILED, how, tuple(last_lines))

    @property
    def trainer_finished(self) -> bool:
        """The trainer exited 0: it reported succeeded or cancelled itself, and is trusted to have."""
        return self.outcome == FINISHED

    def report_to(self, report: ReportingSession) -> str:
        if self.outcome == FAILED:
            report.log(self.reason, level="error")
            report.status(FAILED, f"{self.reason}; its last output:\n" + "\n".join(self.last_lines)
                          if self.last_lines else self.reason)
        elif self.outcome == CANCELLED:
            report.status(CANCELLED, self.reason)
        return self.outcome


TRAINER_FINISHED = Ending(FINISHED)
CANCELLED_LATE = Ending(CANCELLED, "the trainer did not stop in time and was stopped")


def how_trainer_ended(code: int, last_lines: list[str]) -> str:
    """Of several processes, torchrun's summary (in the last lines) names the one that died first."""
    rank = first_failure(last_lines)
    return rank.describe() if rank else f"the trainer {ended_how(code)}"


def how_server_ended(code: int) -> str:
    return f"the vLLM server {ended_how(code)}"
