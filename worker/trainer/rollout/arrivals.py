"""Finished groups waiting for the training loop, handed out oldest policy version first.

Groups finish out of the order they were submitted in: a group is done when its longest
completion is. Handed out in arrival order, a group that lagged would be overtaken by
younger ones step after step; oldest first, it is trained while it is still fresh enough.

The queue also counts the groups it handed out that still hold their places ahead of the
trainer (taken for the next step, not yet released): queued plus taken is what the rollout
worker's budget sees, read under one lock so that a group is never counted in neither.
"""
import heapq
import itertools
import threading
import time

from worker.trainer.rollout.groups import Group


class OldestFirstQueue:
    """Thread-safe; unbounded (the rollout worker's budget keeps it small)."""

    def __init__(self):
        self._heap: list[tuple[int, int, Group]] = []
        self._arrival = itertools.count()  # ties (same version) go in arrival order
        self._taken = 0
        self._changed = threading.Condition()

    def put(self, group: Group) -> None:
        with self._changed:
            self._push(group)

    def take(self, timeout_s: float, max_version: int | None = None) -> Group | None:
        """The oldest group, waiting up to `timeout_s` for one; with `max_version`, only a group
        sampled at that version or before (younger ones stay queued). None if none came in time.
        A group taken holds its place until it is put back, discarded or released."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while not self._head_fits(max_version):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._changed.wait(remaining)
            self._taken += 1
            return heapq.heappop(self._heap)[2]

    def put_back(self, group: Group) -> None:
        """A group taken and not used after all: queued again, in its place by version."""
        with self._changed:
            self._taken -= 1
            self._push(group)

    def discard(self) -> None:
        """A group taken that will never be trained: its place is free."""
        with self._changed:
            self._taken -= 1

    def release_taken(self) -> None:
        """The groups taken so far are being trained: their places are free."""
        with self._changed:
            self._taken = 0

    @property
    def held(self) -> int:
        """Queued plus taken and not released: the places these groups hold ahead of the trainer."""
        with self._changed:
            return len(self._heap) + self._taken

    def __len__(self) -> int:
        with self._changed:
            return len(self._heap)

    def _push(self, group: Group) -> None:
        heapq.heappush(self._heap, (group.model_version, next(self._arrival), group))
        self._changed.notify_all()

    def _head_fits(self, max_version: int | None) -> bool:
        return bool(self._heap) and (max_version is None or self._heap[0][0] <= max_version)
