"""What a judged run reports at a logged step, beside the training's own metrics: each judge's and
reward model's measures (judge/<name>/<key>), the judges' disagreement with the verifiers on the
step's groups, and one warning, counted, when a judge timed out or failed since the last."""
import json

import pytest

pytest.importorskip("torch")

from tests.support.trainers import events_session, logged_lines  # noqa: E402
from worker.trainer.config import TrainingConfig  # noqa: E402
from worker.trainer.loop.step_reports import StepReports  # noqa: E402
from worker.trainer.rollout.groups import Completion, Group  # noqa: E402
from worker.trainer.rollout.scoring import RewardFunction  # noqa: E402


class Measured:
    """A judge's measures as take_metrics gives them: each interval's, then nothing."""

    def __init__(self, *intervals):
        self.intervals, self.taken = list(intervals), 0

    def __call__(self, prompts, completions, **columns):
        return [1.0] * len(completions)

    def take_metrics(self):
        self.taken += 1
        return self.intervals.pop(0) if self.intervals else {"calls": 0.0}


def judged_group():
    completions = [Completion([1], [-1.0], text, "stop") for text in ("4", "5")]
    return Group(prompt_index=0, prompt_text="2+2?", prompt_ids=[1], columns={"answer": "4"}, completions=completions,
                 model_version=0, rewards={"acc": [1.0, 0.0], "style": [1.0, 1.0]})


def function(name, fn=None, **fields):
    return RewardFunction(name=name, weight=1.0, fn=fn or (lambda p, c, **k: [0.0] * len(c)),
                          take_metrics=fn.take_metrics if fn else None, **fields)


def logged(tmp_path, step, groups, rewards, eval_rewards=(), config=None):
    report = events_session(tmp_path).start()
    reports = StepReports(report, config or TrainingConfig(max_steps=1), list(rewards), list(eval_rewards))
    reports.metrics(step, {"train/loss": 0.5}, groups)
    report.close()
    events = [json.loads(line) for line in (tmp_path / "out/events/events-trainer-1.jsonl").read_text().splitlines()]
    return [e["values"] for e in events if e["type"] == "metrics"], logged_lines(tmp_path)


def test_a_logged_step_reports_each_judges_measures_and_its_disagreement_with_the_verifier(tmp_path):
    style = Measured({"calls": 2.0, "latency_s_mean": 0.25, "timeouts": 0.0, "failures": 0.0})
    rewards = [function("acc", verifier=True), function("style", style, pass_threshold=0.5)]
    eval_rewards = [function("style", style, pass_threshold=0.5)]  # the same judge: measured once
    [metrics], lines = logged(tmp_path, 1, [judged_group()], rewards, eval_rewards)
    assert metrics["train/loss"] == 0.5
    assert metrics["judge/style/calls"] == 2.0 and metrics["judge/style/latency_s_mean"] == 0.25
    assert metrics["judge/style/disagreement"] == 0.5 and metrics["judge/style/pays_refused"] == 1.0
    assert style.taken == 1 and not any("timed out" in line for line in lines)


def test_a_judge_that_timed_out_or_failed_is_said_once_counted(tmp_path):
    flaky = Measured({"calls": 40.0, "timeouts": 3.0, "failures": 2.0})
    _, lines = logged(tmp_path, 1, [judged_group()], [function("flaky", flaky, pass_threshold=0.5)])
    assert [line for line in lines if "flaky" in line] == [
        "judge 'flaky': 3 call(s) timed out and 2 failed of 40 since the last logged step; their completions' "
        "rewards are None"]


def test_a_step_not_logged_leaves_the_measures_for_the_next_logged_one(tmp_path):
    style = Measured({"calls": 2.0})
    metrics, _ = logged(tmp_path, 1, [judged_group()], [function("style", style, pass_threshold=0.5)],
                        config=TrainingConfig(max_steps=4, logging_steps=2))
    assert metrics == [] and style.taken == 0


def test_measures_that_cannot_be_taken_are_a_warning_and_the_others_still_count(tmp_path):
    class Broken(Measured):
        def take_metrics(self):
            raise RuntimeError("lost count")

    rewards = [function("broken", Broken(), pass_threshold=0.5), function("rm", Measured({"completions": 8.0}))]
    [metrics], lines = logged(tmp_path, 1, [judged_group()], rewards)
    assert metrics["judge/rm/completions"] == 8.0 and not any(name.startswith("judge/broken/") for name in metrics)
    assert "reward 'broken': its metrics could not be taken: lost count" in lines
