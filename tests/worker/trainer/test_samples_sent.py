"""What the trainer sends after a step: metrics from every group, samples from the kept ones."""
import pytest

from worker.trainer.config import TrainingConfig
from worker.trainer.loop.step_reports import StepReports
from worker.trainer.rollout.groups import Completion, Group
from worker.trainer.rollout.metrics import rollout_metrics


class Recorder:
    """The reporting session's two calls a step makes, recorded by step."""

    def __init__(self):
        self.sent_metrics, self.sent_samples = {}, {}

    def metrics(self, step, values, send_now=False):
        self.sent_metrics[step] = values

    def samples(self, step, records):
        self.sent_samples[step] = records

    def log(self, message, level="info", source=None):
        pass


def group(reward: float) -> Group:
    completions = [Completion(token_ids=[1, 2], logprobs=[0.0, 0.0], text=f"answer {reward}", finish_reason="stop",
                              loss_mask=[1, 1]) for _ in range(2)]
    return Group(prompt_index=0, prompt_text=f"prompt {reward}", prompt_ids=[1], columns={}, completions=completions,
                 model_version=0, rewards={"acc": [reward, reward]}, totals=[reward, reward])


def trainer_after_steps(steps: int, **knobs) -> Recorder:
    """A trainer's reporting, as its loop calls it after each of `steps` steps of 4 groups."""
    config = TrainingConfig(num_generations=2, per_device_train_batch_size=8, seed=5, **knobs)
    recorder = Recorder()
    reports = StepReports(recorder, config, rewards=[], eval_rewards=[])
    groups = [group(float(reward)) for reward in range(4)]
    for step in range(1, steps + 1):
        reports.metrics(step, rollout_metrics(groups))
        reports.samples(step, groups, [0.0] * 8, trained_version=0)
    return recorder


def test_by_default_every_completion_of_every_step_is_sent():
    report = trainer_after_steps(2)
    assert {step: len(records) for step, records in report.sent_samples.items()} == {1: 8, 2: 8}


def test_the_knobs_send_k_groups_every_nth_step_and_the_metrics_still_count_every_group():
    report = trainer_after_steps(6, samples_groups_per_step=1, samples_every_steps=3)
    assert sorted(report.sent_samples) == [3, 6]
    for records in report.sent_samples.values():
        assert len(records) == 2 and len({record["group"] for record in records}) == 1
        assert records[0]["prompt"] == f"prompt {float(records[0]['group'])}"  # `group` is its place in the step
    assert sorted(report.sent_metrics) == [1, 2, 3, 4, 5, 6]
    assert report.sent_metrics[3]["rollout/reward_mean"] == pytest.approx(1.5)  # rewards 0, 1, 2, 3


def test_log_completions_off_sends_none():
    assert trainer_after_steps(2, log_completions=False).sent_samples == {}
