"""Which of a step's groups the run stores as samples: `samples_groups_per_step` of them (0: all)
on every `samples_every_steps`-th step. Metrics are computed from every group before this pick.

The pick is a seeded draw, not the first groups of the step: groups reach the trainer in the
order they finish, and a group finishes when its longest completion does, so the first ones
lean towards short answers. A draw seeded by the run's seed and the step is unbiased by that
order and the same every time (a resumed step keeps the groups it kept before).
"""
import random


def kept_groups(step: int, group_count: int, groups_per_step: int, every_steps: int, seed: int) -> list[int]:
    """Indices (ascending) of the groups of `step` to store; empty on a step that keeps none."""
    if step % every_steps:
        return []
    if groups_per_step == 0 or groups_per_step >= group_count:
        return list(range(group_count))
    draw = random.Random(f"samples:{seed}:{step}")  # str seeds hash the same in every process
    return sorted(draw.sample(range(group_count), groups_per_step))
