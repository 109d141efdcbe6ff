"""When a condition seen at each logged step trips its alarm: once while it holds.

An alarm starts armed, trips when its condition has held for `need` logged steps in a row, and
stays quiet until it has been clear for `rearm` in a row, so a signal hovering at its threshold
raises one alarm. The caller reads a bounded window (the fresh steps and `lookback()` steps
before them) that starts armed; steps before the fresh ones only set the state.
Details: docs/capabilities/evaluation.md#when-an-alarm-trips-and-again.
"""
from collections.abc import Container
from dataclasses import dataclass


@dataclass(frozen=True)
class Streak:
    first: int  # the first of the `need` logged steps that tripped it
    last: int   # the step it tripped at


def lookback(need: int, rearm: int) -> int:
    """Logged steps to read before the fresh ones."""
    return 2 * (need + rearm)


def trips(conditions: list[tuple[int, bool]], fresh: Container[int], need: int, rearm: int) -> list[Streak]:
    """The streaks that trip at fresh steps; `conditions` is (step, holds) in step order."""
    armed, start, held, clear, found = True, 0, 0, 0, []
    for step, holds in conditions:
        if not holds:
            held, clear = 0, clear + 1
            armed = armed or clear >= rearm
            continue
        start, held, clear = (step if held == 0 else start), held + 1, 0
        if held == need and armed:
            armed = False
            if step in fresh:
                found.append(Streak(first=start, last=step))
    return found
