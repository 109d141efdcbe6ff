"""Which trainer process died first and how, read from the summary torchrun prints when it ends
the others: a run that fails says "rank 1 was killed by SIGKILL", not only that torchrun exited."""
import re
from dataclasses import dataclass

from worker.trainer.processes.groups import ended_how

ROOT_CAUSE = "Root Cause (first observed failure)"
RANK = re.compile(r"^\s*rank\s*:\s*(\d+)")
EXIT_CODE = re.compile(r"^\s*exitcode\s*:\s*(-?\d+)")


@dataclass(frozen=True)
class RankFailure:
    rank: int
    exit_code: int

    def describe(self) -> str:
        return f"the trainer's rank {self.rank} {ended_how(self.exit_code)}"


def first_failure(lines: list[str]) -> RankFailure | None:
    """The root cause torchrun names in `lines` (its output's tail), or None where it names none."""
    try:
        start = max(i for i, line in enumerate(lines) if ROOT_CAUSE in line)
    except ValueError:
        return None
    rank = exit_code = None
    for line in lines[start:]:
        rank = rank if rank is not None else _number(RANK, line)
        exit_code = exit_code if exit_code is not None else _number(EXIT_CODE, line)
    return RankFailure(rank, exit_code) if rank is not None and exit_code is not None else None


def _number(pattern: re.Pattern, line: str) -> int | None:
    found = pattern.match(line)
    return int(found.group(1)) if found else None
