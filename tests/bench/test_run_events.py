"""Reading a run's events as the benchmarks do: a step reports several metrics events (its training
metrics, its evaluation, step 0 its set-up), and every one of them counts."""
import json

from bench.run_events import metrics_by_step, training_steps
from bench.trainer import our_numbers

TRAINED = {"system/step_time_s": 2.0, "system/train_seconds": 1.5, "system/weight_sync_s": 0.3,
           "async/wait_for_rollouts_s": 0.0, "async/dropped_stale": 0, "async/staleness_mean": 0.5,
           "async/staleness_max": 1, "async/queue_depth": 3, "rollout/completion_length_mean": 90.0,
           "system/generation_tokens_per_s": 100.0, "system/training_tokens_per_s": 900.0}


def events_file(tmp_path, events: list[dict]):
    path = tmp_path / "events-trainer-1.jsonl"
    path.write_text("".join(json.dumps({"type": "metrics", **event}) + "\n" for event in events))
    return path


def step_events() -> list[dict]:
    return [{"step": 0, "time": 100.0, "values": {"setup/load_s": 3.0}},
            {"step": 1, "time": 110.0, "values": TRAINED},
            {"step": 1, "time": 112.0, "values": {"eval/pass@1": 0.25}},  # the evaluation, after the step
            {"step": 2, "time": 120.0, "values": {**TRAINED, "async/dropped_stale": 1}},
            {"step": 3, "time": 130.0, "values": {**TRAINED, "async/dropped_stale": 1}},
            {"step": 3, "time": 131.0, "values": {"judge/quality/calls": 8.0}}]


def test_every_metrics_event_of_a_step_is_merged_at_the_time_of_its_training_metrics(tmp_path):
    steps = metrics_by_step(events_file(tmp_path, step_events()))
    assert steps[1]["values"]["eval/pass@1"] == 0.25 and steps[1]["values"]["system/step_time_s"] == 2.0
    assert steps[1]["time"] == 110.0 and steps[0]["time"] == 100.0


def test_only_steps_that_trained_are_training_steps(tmp_path):
    assert list(training_steps(events_file(tmp_path, step_events()))) == [1, 2, 3]


def test_the_trainer_bench_reads_a_step_whose_last_event_is_not_its_training_metrics(tmp_path):
    numbers = our_numbers(events_file(tmp_path, step_events()), warmup=1)  # was KeyError: 'async/dropped_stale'
    assert numbers["measured_steps"] == 2 and numbers["window_s"] == 20.0
    assert numbers["dropped"] == 1 and numbers["weight_sync_s"] == [0.3, 0.3]
