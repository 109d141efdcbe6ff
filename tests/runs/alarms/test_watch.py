"""Alarms raised by the ingest (runs/alarms/watch.py): once per trip, not again for a re-delivered
batch, published live after the commit, and stopping the run when its config asks."""
import json
from unittest import mock

import pytest
from django.utils import timezone

from runs.ingest.batches import ingest_batch
from runs.alarms.watch import watch_signals
from runs.live.messages import MetricPointRow
from runs.alarms.models import Alarm
from runs.telemetry.models import LogLine, MetricPoint
from runs.training_runs.models import Run
from worker.trainer.events import EventBatch

HEALTHY = {"train/entropy": 0.6, "train/kl_to_sampler": 0.001, "train/importance_ratio_max": 1.2,
           "rollout/frac_reward_zero_std": 0.1, "rollout/clipped_ratio": 0.0, "rollout/reward_mean": 0.2}


class Trainer:
    """Sends events the way the trainer does: numbered per source, in batches."""

    def __init__(self, run, committing):
        self.run, self.seq, self.committing = run, 0, committing

    def numbered(self, *events):
        numbered = []
        for event in events:
            self.seq += 1
            numbered.append({"seq": self.seq, **event})
        return numbered

    def send(self, events):
        with self.committing(execute=True):  # what the batch published goes out, as after its commit
            return ingest_batch(self.run, EventBatch.model_validate({"source": "trainer", "events": events}))

    def steps(self, first, count, **changes):
        """Metrics at `count` steps from `first`, healthy but for `changes` ({name with __ for /: value})."""
        values = {**HEALTHY, **{name.replace("__", "/"): value for name, value in changes.items()}}
        return self.send(self.numbered(*({"type": "metrics", "step": step, "values": values}
                                         for step in range(first, first + count))))


@pytest.fixture
def trainer(started_run, django_capture_on_commit_callbacks):
    trainer = Trainer(started_run, django_capture_on_commit_callbacks)
    trainer.send(trainer.numbered({"type": "status", "status": "starting"}, {"type": "status", "status": "running"}))
    return trainer


@pytest.fixture
def sent():
    """The payloads of the live messages of a type sent so far."""
    with mock.patch("runs.live.events._send") as send:
        yield lambda kind: [json.loads(call.args[1]["text"])["payload"] for call in send.call_args_list
                            if call.args[1]["type"] == kind]


def test_entropy_collapsing_raises_one_alarm_with_its_numbers(trainer, sent):
    trainer.steps(1, 2)
    for step in range(3, 8):
        trainer.steps(step, 1, train__entropy=0.012)
    alarm = Alarm.objects.get(run=trainer.run)
    assert (alarm.kind, alarm.step, alarm.stopped_run) == ("entropy_collapse", 5, False)
    assert alarm.message == "entropy 0.012 nats/token below 0.05 for 3 logged steps (steps 3-5)"
    assert alarm.values == {"train/entropy": 0.012, "alarm_entropy_min": 0.05}
    [live] = sent("run.alarm")
    assert live["id"] == alarm.pk and live["message"] == alarm.message


def evaluated(trainer, step, share):
    trainer.send(trainer.numbered({"type": "metrics", "step": step, "values": {"eval/pass@1": share}}))


def test_a_task_learnt_held_out_is_named_in_the_alarms_its_mastery_trips(trainer):
    """The tool-use demo solves every episode, then its entropy falls and its groups all score 1."""
    trainer.steps(1, 2)
    evaluated(trainer, 2, 1.0)
    trainer.steps(3, 3, train__entropy=0.004, rollout__frac_reward_zero_std=1.0)
    alarms = {alarm.kind: alarm for alarm in Alarm.objects.filter(run=trainer.run)}
    assert set(alarms) == {"entropy_collapse", "no_learning_signal"}
    for alarm in alarms.values():
        assert alarm.message.endswith("; held out 1.00 at step 2: the task looks learnt, so little is left to "
                                      "learn from it (stop the run, or train on harder problems)")
        assert alarm.values["eval/pass@1"] == 1.0


def test_a_collapse_while_held_out_is_poor_reads_as_a_collapse(trainer):
    evaluated(trainer, 0, 0.4)
    trainer.steps(1, 3, train__entropy=0.004)
    alarm = Alarm.objects.get(run=trainer.run)
    assert alarm.message == "entropy 0.004 nats/token below 0.05 for 3 logged steps (steps 1-3)"
    assert "eval/pass@1" not in alarm.values


def test_an_evaluation_after_the_trip_does_not_explain_it(trainer):
    trainer.steps(1, 3, train__entropy=0.004)
    evaluated(trainer, 10, 1.0)
    assert "learnt" not in Alarm.objects.get(run=trainer.run).message


def test_a_spike_among_many_steps_of_a_batch_trips_at_its_step(trainer):
    trainer.steps(1, 2)
    ratios = {3: 1.1, 4: 80.0, 5: 1.3, 6: 1.1}
    trainer.send(trainer.numbered(*({"type": "metrics", "step": step,
                                     "values": {**HEALTHY, "train/importance_ratio_max": ratio}}
                                    for step, ratio in ratios.items())))
    assert list(Alarm.objects.values_list("kind", "step")) == [("sampler_drift", 4)]


def test_a_redelivered_batch_raises_nothing_new(trainer):
    batch = trainer.numbered(*({"type": "metrics", "step": step, "values": {**HEALTHY, "rollout/clipped_ratio": 0.9}}
                               for step in (1, 2, 3)))
    trainer.send(batch)
    reply = trainer.send(batch)
    assert reply.duplicates == 3
    assert list(Alarm.objects.values_list("kind", "step")) == [("truncation", 3)]


def test_an_alarm_clears_and_is_raised_again(trainer):
    trainer.steps(1, 3, train__kl_to_sampler=5.0)
    trainer.steps(4, 3)
    trainer.steps(7, 1, train__kl_to_sampler=5.0)
    assert list(Alarm.objects.values_list("step", flat=True)) == [1, 7]


def test_an_alarm_in_stop_on_cancels_the_run_and_says_why(trainer, sent):
    Run.objects.filter(pk=trainer.run.pk).update(config={**trainer.run.config, "alarm_stop_on": "no_learning_signal"})
    reply = trainer.steps(1, 3, rollout__frac_reward_zero_std=1.0)
    assert reply.cancel_requested is True
    run = Run.objects.get(pk=trainer.run.pk)
    assert run.cancel_requested and run.status == "running"  # the trainer checkpoints, then reports cancelled
    assert Alarm.objects.get(run=run).stopped_run is True
    line = LogLine.objects.get(run=run, source="control-plane")
    assert line.level == "warning" and "no_learning_signal" in line.message and "step 3" in line.message
    assert sent("run.alarm")[0]["stopped_run"] is True
    assert sent("run.status")[-1]["cancel_requested"] is True


def test_an_alarm_not_in_stop_on_only_warns(trainer):
    Run.objects.filter(pk=trainer.run.pk).update(config={**trainer.run.config, "alarm_stop_on": "eval_diverging"})
    assert trainer.steps(1, 3, rollout__frac_reward_zero_std=1.0).cancel_requested is False
    assert Alarm.objects.get(run=trainer.run).stopped_run is False


def test_a_late_evaluation_that_fell_while_the_reward_rose_raises_eval_diverging(trainer):
    for step in range(1, 21):
        trainer.steps(step, 1, rollout__reward_mean=0.2 if step <= 10 else 0.7)
    trainer.send(trainer.numbered({"type": "metrics", "step": 10, "values": {"eval/pass@1": 0.5}}))
    trainer.steps(21, 1, rollout__reward_mean=0.7)
    trainer.send(trainer.numbered({"type": "metrics", "step": 20, "values": {"eval/pass@1": 0.3}}))
    alarm = Alarm.objects.get(run=trainer.run)
    assert (alarm.kind, alarm.step) == ("eval_diverging", 20)
    assert alarm.values["rollout/reward_mean_before"] == 0.2 and alarm.values["rollout/reward_mean"] == 0.7


def test_a_resumed_run_raises_again_at_a_step_it_trains_again(trainer):
    trainer.steps(1, 1, train__kl_to_sampler=5.0)
    run = Run.objects.get(pk=trainer.run.pk)
    run.queued_at = timezone.now()  # resumed from a checkpoint at step 0: queued again,
    run.save()
    MetricPoint.objects.filter(run=run).delete()  # and the later points set aside
    trainer.run = run
    trainer.steps(1, 1, train__kl_to_sampler=5.0)
    assert Alarm.objects.filter(run=run, step=1).count() == 2


def test_a_batch_without_watched_metrics_costs_no_query(started_run, django_assert_num_queries):
    with django_assert_num_queries(0):
        watch_signals(started_run, [MetricPointRow(step=3, time=0.0, values={"train/loss": 0.5})])


def test_the_check_reads_a_bounded_window_in_two_queries(trainer, django_assert_num_queries):
    trainer.steps(1, 50)
    with django_assert_num_queries(2):
        watch_signals(trainer.run, [MetricPointRow(step=50, time=0.0, values=HEALTHY)])


def test_a_judge_paying_for_refused_completions_raises_judge_disagreement_and_can_stop_the_run(trainer):
    Run.objects.filter(pk=trainer.run.pk).update(config={**trainer.run.config, "alarm_stop_on": "judge_disagreement"})
    trainer.steps(1, 2, judge__tone__pays_refused=0.1, judge__facts__pays_refused=0.1)
    reply = trainer.steps(3, 3, judge__tone__pays_refused=0.75, judge__facts__pays_refused=0.1)
    assert reply.cancel_requested is True
    alarm = Alarm.objects.get(run=trainer.run)
    assert (alarm.kind, alarm.step, alarm.stopped_run) == ("judge_disagreement", 5, True)
    assert alarm.message == ("judge 'tone' pays for 75% of the completions a verifier refuses (above 30%) "
                             "for 3 logged steps (steps 3-5)")


def test_a_judges_streak_spans_batches(trainer):
    for step in range(1, 5):
        trainer.steps(step, 1, judge__tone__pays_refused=0.2 if step == 1 else 0.9)
    assert list(Alarm.objects.values_list("kind", "step")) == [("judge_disagreement", 4)]
