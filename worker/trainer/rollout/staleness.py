"""Staleness accounting: how much may be generated ahead, and what is too old to train on.

A group sampled with weights of version v is trained on when the policy is at
version v' >= v; its staleness is v' - v. The policy advances one version per
weight sync, every `weight_sync_steps` steps, consuming `groups_per_step`
groups each step. A group submitted while the trainer is busy with a step, with
`ahead` groups before it, is trained ceil((ahead + 1) / groups_per_step) steps
later, when every one of those steps (the current one included) has synced. So
with `max_staleness` s, at most
    groups_per_step * weight_sync_steps * s
groups can usefully be ahead of the trainer (queued or in flight); anything
beyond would be dropped on arrival. Submission is throttled to that bound, but
never below one step's worth, or s = 0 would never generate at all.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class StalenessPolicy:
    max_staleness: int
    groups_per_step: int
    weight_sync_steps: int = 1

    @property
    def useful_ahead(self) -> int:
        return max(self.groups_per_step * self.weight_sync_steps * self.max_staleness, self.groups_per_step)

    def submit_budget(self, ahead: int, max_inflight: int, in_flight: int, queue_room: int) -> int:
        """How many more groups may be submitted now."""
        return max(0, min(self.useful_ahead - ahead, max_inflight - in_flight, queue_room))

    def staleness(self, group_version: int, current_version: int) -> int:
        return current_version - group_version

    def is_stale(self, group_version: int, current_version: int) -> bool:
        return self.staleness(group_version, current_version) > self.max_staleness
