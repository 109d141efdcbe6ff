"""What a run reported, read back: metric series (downsampled), samples, logs and checkpoints."""
import datetime
import math

import pytest
from django.utils import timezone

from runs.checkpoints.models.checkpoint import Checkpoint
from runs.telemetry.models import LogLine, MetricPoint, Sample
from runs.training_runs.models import Run

T0 = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)


def add_points(run, name, steps, value=lambda step: float(step)):
    MetricPoint.objects.bulk_create(
        [MetricPoint(run=run, name=name, step=s, value=value(s), time=T0) for s in steps], batch_size=2000)


def metrics(client, run, **params):
    return client.get(f"/api/runs/{run.pk}/metrics/", params)


def test_metric_names_are_listed(owner_api, run):
    add_points(run, "train/loss", range(3))
    add_points(run, "rollout/reward_mean", range(3))
    body = metrics(owner_api, run).json()
    assert body["names"] == ["rollout/reward_mean", "train/loss"]
    assert set(body["series"]) == {"rollout/reward_mean", "train/loss"}


def test_only_the_named_series_are_returned(owner_api, run):
    add_points(run, "train/loss", range(3))
    add_points(run, "rollout/reward_mean", range(3))
    body = metrics(owner_api, run, names="train/loss, missing").json()
    assert set(body["series"]) == {"train/loss", "missing"}
    assert body["series"]["missing"] == {"step": [], "value": [], "min": [], "max": [], "downsampled": False}


def test_empty_names_mean_all(owner_api, run):
    add_points(run, "train/loss", range(3))
    assert set(metrics(owner_api, run, names="").json()["series"]) == {"train/loss"}


def test_another_runs_points_are_not_mixed_in(owner_api, run):
    twin = Run.objects.create(owner=run.owner, name="twin", dataset=run.dataset, config=run.config)
    add_points(run, "train/loss", range(5))
    add_points(twin, "train/loss", range(100, 105))
    assert metrics(owner_api, run).json()["series"]["train/loss"]["step"] == [0, 1, 2, 3, 4]


def test_a_step_range_filters_points(owner_api, run):
    add_points(run, "train/loss", range(50))
    series = metrics(owner_api, run, step_min=10, step_max=19).json()["series"]["train/loss"]
    assert series["step"] == list(range(10, 20)) and series["value"] == [float(s) for s in range(10, 20)]
    assert series["downsampled"] is False


def test_fewer_points_than_asked_come_back_as_they_are(owner_api, run):
    add_points(run, "train/loss", [0, 3, 7], value=lambda s: s * 0.5)
    series = metrics(owner_api, run, max_points=100).json()["series"]["train/loss"]
    assert series == {"step": [0, 3, 7], "value": [0.0, 1.5, 3.5], "min": [0.0, 1.5, 3.5], "max": [0.0, 1.5, 3.5],
                      "downsampled": False}


@pytest.mark.parametrize("step_min", [None, 2500])
def test_many_points_are_reduced_to_buckets_that_keep_min_and_max(owner_api, run, step_min):
    add_points(run, "train/loss", range(10_000), value=lambda s: math.sin(s / 7.0) + s / 1000)
    params = {"max_points": 100} if step_min is None else {"max_points": 100, "step_min": step_min}
    series = metrics(owner_api, run, **params).json()["series"]["train/loss"]
    assert series["downsampled"] is True
    assert 50 <= len(series["step"]) <= 100
    assert len(series["value"]) == len(series["min"]) == len(series["max"]) == len(series["step"])
    assert series["step"][0] == (step_min or 0)
    assert series["step"] == sorted(series["step"])
    for low, mean, high in zip(series["min"], series["value"], series["max"]):
        assert low <= mean + 1e-9 and mean <= high + 1e-9
    lowest = min(math.sin(s / 7.0) + s / 1000 for s in range(step_min or 0, 10_000))
    assert min(series["min"]) == pytest.approx(lowest)


def test_buckets_survive_very_large_step_numbers(owner_api, run):
    add_points(run, "train/loss", range(9_999_000, 10_000_000))
    series = metrics(owner_api, run, max_points=20_000 // 100).json()["series"]["train/loss"]
    assert series["downsampled"] is True and series["step"][0] == 9_999_000 and len(series["step"]) <= 200


@pytest.mark.parametrize("params,field", [
    ({"max_points": 1}, "max_points"),
    ({"max_points": 10**9}, "max_points"),
    ({"step_min": "ten"}, "step_min"),
    ({"step_min": -1}, "step_min"),
    ({"names": ",".join(f"m{i}" for i in range(101))}, "names"),
])
def test_a_bad_metrics_query_is_a_400_naming_the_parameter(owner_api, run, params, field):
    response = metrics(owner_api, run, **params)
    assert response.status_code == 400
    assert field in response.json()


def test_a_step_range_that_ends_before_it_starts_is_empty(owner_api, run):
    make_samples(run, range(4))
    add_points(run, "train/loss", range(4))
    samples = owner_api.get(f"/api/runs/{run.pk}/samples/", {"step_min": 3, "step_max": 1})
    assert samples.status_code == 200 and samples.json()["results"] == []
    series = metrics(owner_api, run, step_min=3, step_max=1)
    assert series.status_code == 200
    assert series.json()["series"]["train/loss"] == {"step": [], "value": [], "min": [], "max": [],
                                                     "downsampled": False}


def make_samples(run, steps, per_step=3):
    Sample.objects.bulk_create([
        Sample(run=run, step=step, group=g, prompt=f"p{step}", completion=f"c{step}-{g}", rewards={"acc": 1.0},
               total_reward=1.0, advantage=0.0)
        for step in steps for g in range(per_step)])


def test_samples_of_one_step(owner_api, run):
    make_samples(run, range(5))
    body = owner_api.get(f"/api/runs/{run.pk}/samples/", {"step": 3}).json()
    assert body["count"] == 3 and {s["step"] for s in body["results"]} == {3}


def test_samples_of_a_step_range_are_paginated_in_order(owner_api, run):
    make_samples(run, range(10))
    first = owner_api.get(f"/api/runs/{run.pk}/samples/", {"step_min": 2, "step_max": 5, "page_size": 5}).json()
    assert first["count"] == 12 and len(first["results"]) == 5 and first["next"]
    second = owner_api.get(first["next"]).json()
    steps = [(s["step"], s["group"]) for s in first["results"] + second["results"]]
    assert steps == sorted(steps) and steps[0] == (2, 0)
    assert all(2 <= s <= 5 for s, _ in steps)


def test_episodes_are_filtered_by_why_they_ended(owner_api, run):
    make_samples(run, range(2))  # one-shot: no end reason
    turns = [{"role": "user", "content": "hi", "tool_calls": [], "trained": False, "model_version": None,
              "num_tokens": 1, "error": ""},
             {"role": "assistant", "content": "", "tool_calls": [{"name": "look", "arguments": "{}"}],
              "trained": True, "model_version": 1, "num_tokens": 4, "error": "tool timed out"}]
    Sample.objects.bulk_create([Sample(run=run, step=2, group=g, prompt="p", completion="", turns=turns,
                                       end_reason=reason) for g, reason in enumerate(["done", "max_turns", "done"])])
    body = owner_api.get(f"/api/runs/{run.pk}/samples/", {"end_reason": "done"}).json()
    assert body["count"] == 2 and {s["end_reason"] for s in body["results"]} == {"done"}
    assert body["results"][0]["turns"] == turns
    assert owner_api.get(f"/api/runs/{run.pk}/samples/", {"end_reason": "max_turns", "step": 1}).json()["count"] == 0


def test_an_unknown_end_reason_is_a_400_naming_the_allowed_ones(owner_api, run):
    response = owner_api.get(f"/api/runs/{run.pk}/samples/", {"end_reason": "bored"})
    assert response.status_code == 400
    message = " ".join(response.json()["end_reason"])
    assert "bored" in message and "max_turns" in message and "environment_timeout" in message


@pytest.mark.parametrize("params,field", [({"step": "x"}, "step"),
                                          ({"page": 99}, "detail")])
def test_a_bad_samples_query_is_refused(owner_api, run, params, field):
    make_samples(run, range(2))
    response = owner_api.get(f"/api/runs/{run.pk}/samples/", params)
    assert response.status_code in (400, 404)
    assert field in response.json()


@pytest.mark.parametrize("parameter", ["page", "page_size"])
@pytest.mark.parametrize("value", ["", "two", "0", "-1", "1.5"])
def test_a_page_or_page_size_that_is_not_a_positive_whole_number_is_a_400_naming_it(owner_api, run, parameter, value):
    make_samples(run, range(2))
    response = owner_api.get(f"/api/runs/{run.pk}/samples/", {parameter: value})
    assert response.status_code == 400, response.content
    assert list(response.json()) == [parameter] and repr(value) in response.json()[parameter][0]


def test_logs_after_a_line_return_only_newer_lines(owner_api, run):
    lines = LogLine.objects.bulk_create(
        [LogLine(run=run, time=timezone.now(), message=f"line {i}") for i in range(6)])
    first = owner_api.get(f"/api/runs/{run.pk}/logs/").json()
    assert [line["message"] for line in first["results"]] == [f"line {i}" for i in range(6)]
    newer = owner_api.get(f"/api/runs/{run.pk}/logs/", {"after": first["results"][3]["id"]}).json()
    assert [line["message"] for line in newer["results"]] == ["line 4", "line 5"]
    assert len(lines) == 6


def test_logs_filter_by_lowest_level_and_by_source(owner_api, run):
    LogLine.objects.bulk_create([LogLine(run=run, time=timezone.now(), level=level, source=source, message=level)
                                 for level, source in [("debug", "trainer"), ("info", "worker"),
                                                       ("warning", "trainer"), ("error", "worker")]])

    def messages(**params):
        response = owner_api.get(f"/api/runs/{run.pk}/logs/", params)
        assert response.status_code == 200, response.content
        return [line["message"] for line in response.json()["results"]]

    assert messages(level="warning") == ["warning", "error"]
    assert messages(level="error", source="worker") == ["error"]
    assert messages(source="trainer") == ["debug", "warning"]
    refused = owner_api.get(f"/api/runs/{run.pk}/logs/", {"level": "loud"})
    assert refused.status_code == 400 and "level" in refused.json()


@pytest.mark.parametrize("after", ["soon", "-1"])
def test_a_bad_after_is_a_400_naming_it(owner_api, run, after):
    response = owner_api.get(f"/api/runs/{run.pk}/logs/", {"after": after})
    assert response.status_code == 400
    assert "after" in response.json()


def test_checkpoints_are_listed_in_step_order(owner_api, run):
    for step in (30, 10, 20):
        Checkpoint.objects.create(run=run, step=step, path=f"/ckpt/{step}", size_bytes=step * 1000,
                                  created_at=timezone.now())
    body = owner_api.get(f"/api/runs/{run.pk}/checkpoints/").json()
    assert [c["step"] for c in body] == [10, 20, 30]
    assert body[0]["path"] == "/ckpt/10" and body[0]["size_bytes"] == 10_000


def test_a_step_trained_again_after_a_resume_charts_once_with_the_later_value(owner_api, run):
    now = timezone.now()
    for step, value in [(1, 0.1), (2, 0.2), (3, 0.3), (2, 0.25), (3, 0.35), (4, 0.4)]:  # resumed from step 1
        MetricPoint.objects.create(run=run, name="train/loss", step=step, value=value, time=now)
    got = owner_api.get(f"/api/runs/{run.pk}/metrics/", {"names": "train/loss"}).json()["series"]["train/loss"]
    assert got["step"] == [1, 2, 3, 4] and got["value"] == [0.1, 0.25, 0.35, 0.4]
    assert MetricPoint.objects.filter(run=run, step=2).count() == 2  # both attempts stay stored
