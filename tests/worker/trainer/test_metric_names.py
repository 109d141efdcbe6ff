"""The catalogue of metric names: constants, families and the charts they are drawn in."""
import re
from pathlib import Path

import pytest

from worker.trainer import metric_names as names
from worker.trainer.metric_names import MetricFamily

RUN_CHARTS = Path(__file__).resolve().parents[3] / "frontend" / "static" / "js" / "run_charts.js"


def constants() -> dict[str, str]:
    return {key: value for key, value in vars(names).items() if key.isupper() and isinstance(value, str)}


def families() -> dict[str, MetricFamily]:
    return {key: value for key, value in vars(names).items() if isinstance(value, MetricFamily)}


def test_every_name_constant_is_catalogued_once_with_a_unit_kind_and_description():
    metric_constants = {key: value for key, value in constants().items() if key != "EVAL_PREFIX"}
    assert sorted(metric_constants.values()) == sorted(names.CATALOGUE)
    assert all(metric.description for metric in names.CATALOGUE.values())


def test_a_family_builds_its_names_and_reads_its_members_back():
    assert names.ROLLOUT_REWARD_FN_MEAN.name(reward="accuracy") == "rollout/reward/accuracy_mean"
    assert names.ROLLOUT_REWARD_FN_MEAN.members("rollout/reward/accuracy_mean") == ("accuracy",)
    assert names.ROLLOUT_REWARD_FN_MEAN.members("rollout/reward_mean") is None
    assert names.JUDGE_MEASURE.members("judge/strict/latency_s_mean") == ("strict", "latency_s_mean")
    assert names.EVAL_PASS_AT_K.name(k=4) == "eval/pass@4"
    assert names.EVAL_PASS_AT_K.members("eval/pass@k") is None


def test_a_family_as_a_glob_has_a_star_for_each_member():
    assert names.JUDGE_PAYS_REFUSED.glob == "judge/*/pays_refused"


@pytest.mark.parametrize("family, members, constant", [
    (names.ASYNC_BLOCKED_BY, {"bound": "staleness"}, names.ASYNC_BLOCKED_BY_STALENESS),
    (names.ASYNC_BLOCKED_BY, {"bound": "inflight_cap"}, names.ASYNC_BLOCKED_BY_INFLIGHT_CAP),
    (names.ASYNC_BLOCKED_BY, {"bound": "queue"}, names.ASYNC_BLOCKED_BY_QUEUE),
    (names.SYSTEM_WEIGHT_SYNC_PART, {"part": "write"}, names.SYSTEM_WEIGHT_SYNC_WRITE_S),
    (names.SYSTEM_WEIGHT_SYNC_PART, {"part": "server_reload"}, names.SYSTEM_WEIGHT_SYNC_SERVER_RELOAD_S),
    (names.SYSTEM_WEIGHT_SYNC_PART, {"part": "upload"}, names.SYSTEM_WEIGHT_SYNC_UPLOAD_S),
    (names.SYSTEM_WEIGHT_SYNC_PART, {"part": "send"}, names.SYSTEM_WEIGHT_SYNC_SEND_S),
    (names.EVAL_PASS_AT_K, {"k": 1}, names.EVAL_PASS_AT_1),
])
def test_the_members_named_apart_are_those_their_family_builds(family, members, constant):
    assert family.name(**members) == constant


def test_every_chart_a_metric_names_is_one_the_run_page_draws():
    drawn = set(re.findall(r'\{ id: "([a-z-]+)", title:', RUN_CHARTS.read_text()))
    named = {m.chart for m in names.CATALOGUE.values()} | {f.chart for f in families().values()}
    assert named - {""} <= drawn
