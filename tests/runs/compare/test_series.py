"""Series of several runs on one x axis: aligned, downsampled in the database, with gaps
where a run is shorter or never reported a metric."""
import datetime

import pytest

from runs.compare import fetch
from runs.compare.fetch import step_bounds
from runs.compare.series import compare_series
from tests.support.telemetry import T0, add_points


def test_runs_with_different_step_counts_share_x_values_and_the_shorter_one_ends_early(make_run):
    long, short = make_run("long"), make_run("short")
    add_points(long, "train/loss", range(0, 20))
    add_points(short, "train/loss", range(0, 8), value=lambda s: 100.0 + s)
    joined = compare_series([long, short], ["train/loss"], "step", 500)["train/loss"].joined()
    assert joined["x"] == list(range(20))
    assert joined["values"][str(long.pk)] == [float(s) for s in range(20)]
    assert joined["values"][str(short.pk)] == [100.0 + s for s in range(8)] + [None] * 12
    assert joined["downsampled"] is False and joined["missing"] == []


def test_a_metric_one_run_never_reported_is_all_gaps_and_listed_as_missing(make_run):
    with_kl, without = make_run("a"), make_run("b")
    add_points(with_kl, "train/kl_to_sampler", range(5))
    add_points(without, "train/loss", range(5))
    joined = compare_series([with_kl, without], ["train/kl_to_sampler", "nothing"], "step", 100)
    assert joined["train/kl_to_sampler"].joined()["values"][str(without.pk)] == [None] * 5
    assert joined["train/kl_to_sampler"].joined()["missing"] == [without.pk]
    assert joined["nothing"].joined() == {"x": [], "values": {str(with_kl.pk): [], str(without.pk): []},
                                          "missing": [with_kl.pk, without.pk], "downsampled": False}


def test_a_series_a_little_longer_than_the_points_asked_is_averaged_per_bucket(make_run):
    first, second = make_run("a"), make_run("b")
    add_points(first, "r", range(200))
    add_points(second, "r", range(100))
    joined = compare_series([first, second], ["r"], "step", 50)["r"].joined()
    assert joined["downsampled"] is True
    assert joined["x"] == list(range(0, 200, 4))
    # Bucket 0 holds steps 0-3: their mean.
    assert joined["values"][str(first.pk)][:2] == [1.5, 5.5]
    assert joined["values"][str(second.pk)][24] == pytest.approx(97.5)
    assert joined["values"][str(second.pk)][25:] == [None] * 25


def test_a_long_series_is_reduced_to_one_logged_point_per_bucket_without_reading_it_all(make_run, monkeypatch):
    run, other = make_run("long", logging_steps=5), make_run("other")
    add_points(run, "r", range(0, 50_000, 5))
    add_points(other, "r", range(0, 10))
    averaged = []
    monkeypatch.setattr(fetch, "_bucket_means", lambda *args, **kwargs: averaged.append(args) or {})
    joined = compare_series([run, other], ["r"], "step", 100)["r"].joined()
    values = joined["values"][str(run.pk)]
    assert len(joined["x"]) == 100 and joined["downsampled"] is True
    # Each picked point is a real logged step's value, at or after its bucket's start.
    assert all(value % 5 == 0 and value >= x for x, value in zip(joined["x"], values))
    assert averaged == []
    assert joined["values"][str(other.pk)][:2] == [0.0, None]  # its ten steps fit in the first bucket


def test_irregular_steps_fall_back_to_bucket_means(make_run):
    run, other = make_run("irregular"), make_run("other")
    add_points(run, "r", range(0, 100_000, 7))  # logging_steps says 1: picks mostly miss
    add_points(other, "r", range(3))
    joined = compare_series([run, other], ["r"], "step", 100)["r"].joined()
    assert sum(value is not None for value in joined["values"][str(run.pk)]) == 100


def test_samples_seen_scale_each_run_by_its_completions_per_step(make_run):
    small, big = make_run("small", per_device_train_batch_size=8), make_run("big", per_device_train_batch_size=32)
    add_points(small, "r", range(1, 5))
    add_points(big, "r", range(1, 3), value=lambda s: 10.0 * s)
    joined = compare_series([small, big], ["r"], "samples", 500)["r"].joined()
    assert joined["x"][0] == 8 and joined["x"][-1] == 64
    by_x = dict(zip(joined["x"], joined["values"][str(big.pk)]))
    assert by_x[32] == 10.0 and by_x[64] == 20.0
    assert dict(zip(joined["x"], joined["values"][str(small.pk)]))[32] == 4.0


def test_wall_time_is_seconds_since_each_run_started(make_run):
    early, late = make_run("early"), make_run("late")
    early.started_at = T0
    early.save()
    late.started_at = T0 + datetime.timedelta(hours=1)
    late.save()
    add_points(early, "r", range(3), seconds_per_step=10)
    add_points(late, "r", range(3), seconds_per_step=20)
    for point in late.metric_points.all():
        point.time += datetime.timedelta(hours=1, seconds=5)
        point.save()
    joined = compare_series([early, late], ["r"], "time", 500)["r"].joined()
    assert joined["x"] == [0.0, 5.0, 10.0, 20.0, 25.0, 45.0]
    assert joined["values"][str(late.pk)] == [None, 0.0, None, None, 1.0, 2.0]


def test_wall_time_starts_at_the_first_point_when_it_precedes_the_recorded_start(make_run):
    run, other = make_run("a"), make_run("b")
    run.started_at = T0 + datetime.timedelta(days=1)
    run.save()
    add_points(run, "r", range(3), seconds_per_step=10)
    joined = compare_series([run, other], ["r"], "time", 500)["r"].joined()
    assert joined["x"] == [0.0, 10.0, 20.0]


def test_bounds_give_first_and_last_step_and_the_last_value(make_run):
    run = make_run("a")
    add_points(run, "r", range(3, 40), value=lambda s: s * 2.0)
    bounds = step_bounds([run.pk], ["r", "none"])
    assert set(bounds) == {(run.pk, "r")}
    assert (bounds[run.pk, "r"].lo, bounds[run.pk, "r"].hi, bounds[run.pk, "r"].last_value) == (3, 39, 78.0)
    assert bounds[run.pk, "r"].first_time == T0 + datetime.timedelta(seconds=30)


def test_picks_are_sent_in_batches_small_enough_for_sqlite(make_run, monkeypatch):
    monkeypatch.setattr(fetch, "MAX_PICKS_PER_QUERY", 150)
    made = [make_run(f"r{i}") for i in range(3)]
    for run in made:
        add_points(run, "r", range(10_000), value=lambda s: s * 1.0)
    joined = compare_series(made, ["r"], "step", 100)["r"].joined()
    for run in made:
        values = joined["values"][str(run.pk)]
        assert len(values) == 100 and values == [float(x) for x in joined["x"]]


def test_a_long_series_on_wall_time_is_picked_with_the_times_of_its_steps(make_run):
    run, other = make_run("long"), make_run("other")
    run.started_at = T0
    run.save()
    add_points(run, "r", range(20_000), seconds_per_step=2)
    joined = compare_series([run, other], ["r"], "time", 50)["r"].joined()
    assert len(joined["x"]) == 50 and joined["downsampled"] is True
    assert all(x == 2 * value for x, value in zip(joined["x"], joined["values"][str(run.pk)]))


def test_a_config_edited_into_nonsense_reads_its_counts_as_defaults():
    from runs.compare.series import logging_stride, samples_per_step

    assert samples_per_step({"per_device_train_batch_size": "lots", "gradient_accumulation_steps": 2}) == 16
    assert logging_stride({"logging_steps": 0}) == 1 and logging_stride({}) == 1
    assert samples_per_step({"per_device_train_batch_size": 4, "gradient_accumulation_steps": True}) == 4


def test_picked_wall_times_keep_their_microseconds(make_run):
    """Times travel as epoch microseconds (computed by PostgreSQL there): x must equal the
    timedelta arithmetic to the microsecond, rounded as the chart gets it."""
    run, other = make_run("long"), make_run("other")
    run.started_at = T0
    run.save()
    add_points(run, "r", range(20_000), seconds_per_step=1.000003)
    joined = compare_series([run, other], ["r"], "time", 50)["r"].joined()
    assert joined["downsampled"] is True
    expected = [round(datetime.timedelta(seconds=value * 1.000003).total_seconds(), 3)
                for value in joined["values"][str(run.pk)]]
    assert joined["x"] == expected


def test_the_summary_metrics_read_with_the_bounds_do_not_move_the_wall_clock_origin(make_run):
    from runs.compare.comparison import build_comparison
    from worker.trainer.metric_names import SYSTEM_GENERATION_TOKENS_PER_S

    run, other = make_run("a"), make_run("b")
    add_points(run, SYSTEM_GENERATION_TOKENS_PER_S, range(0, 5))        # from T0
    add_points(run, "r", range(10, 13))               # from T0 + 100 s
    comparison = build_comparison([run, other], ["r"], "time", 500)
    assert comparison["series"]["r"]["x"] == [0.0, 10.0, 20.0]
    assert comparison["summary"][0]["tokens_per_s"] == 2.0
