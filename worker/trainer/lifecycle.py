"""What a run has started, stopped in reverse order however the run ends.

Start-up registers each part as it starts it, before the call that may fail half-way
(a server spawned but never healthy is still a process to end). Stopping goes newest
first, so that a part is stopped before the parts it uses (the rollouts before the
server they sample), and each stop is guarded: one that fails is logged and the rest
are still stopped.
"""
import logging
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger("worker.trainer")


@dataclass
class _Started:
    part: object
    stop: Callable[[], object]


class Lifecycle:
    def __init__(self):
        self._running: list[_Started] = []
        self.stopped: list[object] = []  # parts in the order they were told to stop, a failed stop included

    def started(self, part, stop: Callable[[], object]):
        """Registers `part`, stopped by calling `stop`; returns `part`."""
        self._running.append(_Started(part, stop))
        return part

    def replace(self, old, new, stop: Callable[[], object]) -> None:
        """`new` takes `old`'s place in the stopping order; the caller has stopped `old`."""
        for entry in self._running:
            if entry.part is old:
                entry.part, entry.stop = new, stop
                return
        raise ValueError(f"{type(old).__name__} is no part this run started")

    @property
    def running(self) -> list[object]:
        """The parts started and not yet stopped, oldest first."""
        return [entry.part for entry in self._running]

    def stop_all(self) -> None:
        while self._running:
            entry = self._running.pop()
            self.stopped.append(entry.part)
            try:
                entry.stop()
            except Exception:  # shutting down: keep going, the others still need stopping
                log.exception("while stopping %s", type(entry.part).__name__)
