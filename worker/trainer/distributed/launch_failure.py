"""Which trainer process died first and how, read from the summary torchrun prints when it ends
the others: a run that fails says "rank 1 was killed by SIGKILL", not only that torchrun exited.

torchrun's own "root cause" is the failure with the earliest timestamp, in whole seconds. When a
rank is killed, its peers fail at their next collective within the same second and record the
time of their own exception, so torchrun may name a peer's "exited with code 1" instead. A rank
killed by a signal within a moment of that root cause did not die of a peer's death, so it is
the cause; torchrun's own signals are not: SIGTERM to the ranks left when one fails, and SIGKILL
to those still running 30 s later.
"""
import re
import signal
from dataclasses import dataclass
from datetime import datetime

from worker.trainer.processes.groups import ended_how

SUMMARY_START = re.compile(r"^\s*Failures:\s*$")
ROOT_CAUSE = "Root Cause (first observed failure)"
RANK = re.compile(r"^\s*rank\s*:\s*(\d+)")
EXIT_CODE = re.compile(r"^\s*exitcode\s*:\s*(-?\d+)")
TIME = re.compile(r"^\s*time\s*:\s*(\S+)")
TIME_FORMAT = "%Y-%m-%d_%H:%M:%S"  # as torchrun prints it
SIGTERM = -signal.SIGTERM  # as an exit code
SAME_MOMENT_S = 2  # torchrun's times are whole seconds


@dataclass(frozen=True)
class RankFailure:
    rank: int
    exit_code: int
    at: datetime | None = None

    def killed_with(self, cause: "RankFailure") -> bool:
        """Killed by a signal not torchrun's, about when `cause` failed."""
        if self.exit_code >= 0 or self.exit_code == SIGTERM:
            return False
        return self.at is None or cause.at is None or abs((self.at - cause.at).total_seconds()) <= SAME_MOMENT_S

    def describe(self) -> str:
        return f"the trainer's rank {self.rank} {ended_how(self.exit_code)}"


def first_failure(lines: list[str]) -> RankFailure | None:
    """The failure that caused the others in torchrun's last summary in `lines` (its output's
    tail): a rank killed by a signal with torchrun's root cause, where one is listed, else that
    root cause; None where `lines` hold no summary."""
    failures = listed_failures(lines)
    if not failures:
        return None
    root_cause = failures[-1]  # torchrun prints its root cause after the other failures
    return next((failure for failure in failures if failure.killed_with(root_cause)), root_cause)


def listed_failures(lines: list[str]) -> list[RankFailure]:
    """Every rank failure in torchrun's last summary, in the order it prints them."""
    roots = [i for i, line in enumerate(lines) if ROOT_CAUSE in line]
    if not roots:
        return []
    starts = [i for i, line in enumerate(lines[:roots[-1]]) if SUMMARY_START.match(line)]
    failures, rank, at = [], None, None
    for line in lines[starts[-1] if starts else roots[-1]:]:
        at = at or _time(line)
        rank = rank if rank is not None else _number(RANK, line)
        exit_code = _number(EXIT_CODE, line)
        if rank is not None and exit_code is not None:
            failures.append(RankFailure(rank, exit_code, at))
            rank = at = None
    return failures


def _time(line: str) -> datetime | None:
    found = TIME.match(line)
    try:
        return datetime.strptime(found.group(1), TIME_FORMAT) if found else None
    except ValueError:
        return None


def _number(pattern: re.Pattern, line: str) -> int | None:
    found = pattern.match(line)
    return int(found.group(1)) if found else None
