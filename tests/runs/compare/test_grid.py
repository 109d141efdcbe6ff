"""The shared x grid: buckets, their starts, the steps picked per bucket, and joining runs."""
import pytest

from runs.compare.grid import Grid, StepScale, join


def test_a_short_range_gets_one_bucket_per_integer():
    grid = Grid.over(0, 9, points=500)
    assert grid.buckets == 10
    assert [grid.start(b) for b in range(10)] == list(range(10))
    assert [grid.bucket_of(x) for x in range(10)] == list(range(10))


@pytest.mark.parametrize("lo, hi, points", [(0, 99_999, 500), (3, 1000, 7), (1, 1_600_000, 499)])
def test_each_bucket_starts_at_its_smallest_member(lo, hi, points):
    grid = Grid.over(lo, hi, points)
    for bucket in range(grid.buckets):
        start = grid.start(bucket)
        assert grid.bucket_of(start) == bucket
        assert start == lo or grid.bucket_of(start - 1) == bucket - 1
    assert grid.bucket_of(hi) == grid.buckets - 1


def test_picked_steps_fall_one_per_bucket_on_logged_steps():
    scale = StepScale(Grid.over(0, 99_999, 500))
    picks = scale.picks(0, 99_999, stride=1)
    assert len(picks) == 500 and min(picks) == 0
    assert all(scale.bucket_of_step(step) == bucket for step, bucket in picks.items())
    assert sorted(picks.values()) == list(range(500))
    sparse = scale.picks(10, 99_990, stride=10)
    assert all(step % 10 == 0 for step in sparse)
    assert len(sparse) == 500


def test_a_run_shorter_than_the_grid_picks_steps_only_in_its_own_range():
    scale = StepScale(Grid.over(0, 99_999, 100))
    steps = scale.picks(0, 49_999, stride=1)
    assert len(steps) == 50 and max(steps) <= 49_999


def test_samples_seen_scale_steps_by_completions_per_step():
    grid = Grid.over(0, 16 * 1000, 100)
    scale = StepScale(grid, per_step=16)
    assert scale.bucket_of_step(500) == grid.bucket_of(8000)
    assert all(grid.start(bucket) <= step * 16 for step, bucket in scale.picks(0, 1000, 1).items())


def test_join_puts_runs_on_the_union_of_their_x_values_with_gaps_as_none():
    xs, columns = join({1: [(0, 1.0), (2, 3.0)], 2: [(1, 5.0), (2, 6.0)], 3: []})
    assert xs == [0, 1, 2]
    assert columns == {1: [1.0, None, 3.0], 2: [None, 5.0, 6.0], 3: [None, None, None]}


def test_join_rounds_x_so_nearly_equal_times_share_a_slot():
    xs, columns = join({1: [(1.00001, 1.0)], 2: [(1.00002, 2.0)]}, ndigits=3)
    assert xs == [1.0] and columns == {1: [1.0], 2: [2.0]}
