"""When a condition seen at each logged step trips its alarm: once while it holds.

An alarm starts armed. It trips when its condition has held for `need` logged steps in a row
(1 for a spike, alarm_patience for a slow signal), and stays quiet until the condition has
been clear for `rearm` logged steps in a row (alarm_patience): a signal hovering at its
threshold raises one alarm, not one every few steps, and one that recovers and goes bad again
raises another.

The caller reads a bounded window: the fresh steps and `lookback()` logged steps before them,
and the window starts armed. Steps before the fresh ones only set the state (their alarms, if
any, were raised when they were fresh). Any streak that decides the state fits in the window;
only a condition flickering in short bursts through the whole lookback leaves it unknown, and
is then raised again, as a reminder.
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
