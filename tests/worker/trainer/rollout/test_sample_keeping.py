"""Which groups of a step are stored as samples: all by default, or a seeded pick every n steps."""
from collections import Counter

from worker.trainer.rollout.sample_keeping import kept_groups


def test_by_default_every_group_of_every_step_is_kept():
    assert [kept_groups(step, 3, 0, 1, seed=42) for step in (1, 2, 3)] == [[0, 1, 2]] * 3


def test_only_every_nth_step_keeps_groups():
    kept = {step: kept_groups(step, 4, 0, 10, seed=42) for step in range(1, 31)}
    assert [step for step, groups in kept.items() if groups] == [10, 20, 30]


def test_k_groups_of_a_step_are_k_distinct_indices_in_order():
    kept = kept_groups(7, 16, 3, 1, seed=42)
    assert len(set(kept)) == 3 and kept == sorted(kept) and all(0 <= index < 16 for index in kept)


def test_the_pick_is_the_same_for_the_same_seed_and_step_and_moves_between_steps():
    assert kept_groups(7, 16, 3, 1, seed=42) == kept_groups(7, 16, 3, 1, seed=42)
    assert len({tuple(kept_groups(step, 16, 3, 1, seed=42)) for step in range(1, 21)}) > 1
    assert any(kept_groups(step, 16, 3, 1, seed=1) != kept_groups(step, 16, 3, 1, seed=2) for step in range(1, 6))


def test_asking_for_as_many_groups_as_the_step_has_keeps_them_all():
    assert kept_groups(5, 4, 4, 1, seed=0) == [0, 1, 2, 3]
    assert kept_groups(5, 2, 4, 1, seed=0) == [0, 1]  # a short last step


def test_every_place_in_the_step_is_picked_about_as_often():
    """Groups arrive shortest-first; a pick that favoured early places would favour short answers."""
    picks = Counter(index for step in range(1, 4001) for index in kept_groups(step, 4, 1, 1, seed=3))
    assert all(900 <= picks[index] <= 1100 for index in range(4)), picks
