"""A run's events file (events/events-trainer-1.jsonl) as the benchmarks read it.

A step sends several metrics events: its training metrics, its evaluation's, its reward
models' (and step 0 the set-up's). Reading one event a step loses the others' names (the
KeyError bench.trainer once met), so every reader here merges all the events of a step.
"""
import json
from pathlib import Path
from worker.trainer.metric_names import SYSTEM_STEP_TIME_S

# In the metrics event every training step sends, and in no other.
TRAINING_METRIC = SYSTEM_STEP_TIME_S


def events_of(events_file: Path, kind: str) -> list[dict]:
    """The events of one type, in the order written."""
    return [event for line in events_file.read_text().splitlines() if (event := json.loads(line))["type"] == kind]


def metrics_by_step(events_file: Path) -> dict[int, dict]:
    """{step: {"time": when its training metrics were sent (else its first event), "values": every
    value the step reported}}, in step order."""
    steps: dict[int, dict] = {}
    for event in events_of(events_file, "metrics"):
        step = steps.setdefault(event["step"], {"time": event["time"], "values": {}})
        step["values"].update(event["values"])
        if TRAINING_METRIC in event["values"]:
            step["time"] = event["time"]
    return dict(sorted(steps.items()))


def training_steps(events_file: Path) -> dict[int, dict]:
    """metrics_by_step, only the steps that trained (step 0's set-up and the like left out)."""
    return {step: merged for step, merged in metrics_by_step(events_file).items()
            if TRAINING_METRIC in merged["values"]}
