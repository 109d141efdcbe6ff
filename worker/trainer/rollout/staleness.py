"""Staleness accounting: how much may be generated ahead, and what is too old to train on.

A group sampled with weights of version v and trained at version v' >= v has staleness v' - v.
The policy advances one version per weight sync, so with `max_staleness` s at most
    groups_per_step * weight_sync_steps * s
groups can usefully be ahead of the trainer (queued or in flight); anything beyond would be
dropped on arrival. Submission is throttled to that bound, but never below one step's worth.
Where vLLM has a CPU core of its own (inference/cpu_sharing.py), it generates in waves: a refill
is held back until half of that bound is free, never while the trainer lacks a step's groups.
Details: docs/concepts.md#staleness; waves: docs/capabilities/trainer.md#vllm-and-the-trainer-share-the-cores.
"""
from dataclasses import dataclass

from worker.trainer.rollout.pipeline_window import INFLIGHT_CAP, QUEUE, STALENESS


@dataclass(frozen=True)
class StalenessPolicy:
    max_staleness: int
    groups_per_step: int
    weight_sync_steps: int = 1

    @property
    def useful_ahead(self) -> int:
        return max(self.groups_per_step * self.weight_sync_steps * self.max_staleness, self.groups_per_step)

    @property
    def half_ahead(self) -> int:
        """The wave size of a server that generates in waves: half the useful bound, so that
        one wave is trained while the next is generated."""
        return max(1, self.useful_ahead // 2)

    def submit_budget(self, ahead: int, max_inflight: int, in_flight: int, queue_room: int, wave: int = 1) -> int:
        """How many more groups may be submitted now: none until `wave` may go at once,
        unless fewer than a step's groups are ahead (the trainer would wait for the wave)."""
        budget = max(0, min(self.useful_ahead - ahead, max_inflight - in_flight, queue_room))
        if budget < wave and ahead >= self.groups_per_step:
            return 0
        return budget

    def holding_bound(self, ahead: int, max_inflight: int, in_flight: int, queue_room: int) -> str | None:
        """Which bound of submit_budget leaves no room now (None: there is room, though the
        wave rule may still hold it). Where several do, the one a larger in-flight cap would
        not lift is named: the staleness bound, then the queue's, then the cap."""
        rooms = ((STALENESS, self.useful_ahead - ahead), (QUEUE, queue_room), (INFLIGHT_CAP, max_inflight - in_flight))
        return next((bound for bound, room in rooms if room <= 0), None)

    def staleness(self, group_version: int, current_version: int) -> int:
        return current_version - group_version

    def is_stale(self, group_version: int, current_version: int) -> bool:
        return self.staleness(group_version, current_version) > self.max_staleness
