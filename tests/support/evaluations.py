"""Evaluations as the trainer reports them (worker/trainer/events.py): an `evaluation` event and
the eval/ metrics at the same step, built from pass marks, for tests of what reads them.

`marks[i]` is example i's answers: a bool (one answer) or a list of bools (one per answer).
"""
import hashlib

from runs.ingest.batches import ingest_batch
from runs.telemetry.models import EventCursor
from worker.trainer.events import EventBatch

PROMPTS = [f"What is {n} + {n}?" for n in range(1, 65)]


def example_key(prompt: str) -> str:
    """As the trainer names an example (worker/trainer/evaluation/eval_set.py)."""
    return hashlib.sha256(prompt.encode()).hexdigest()[:16]


def _answers(index: int, step: int, mark) -> list[dict]:
    marks = mark if isinstance(mark, list) else [mark]
    return [{"text": f"answer {index}.{n} at step {step}: {'right' if right else 'wrong'}",
             "rewards": {"accuracy": 1.0 if right else 0.0}, "total_reward": 1.0 if right else 0.0,
             "passed": right, "num_tokens": 7, "finish_reason": "stop"} for n, right in enumerate(marks)]


def evaluation_event(seq: int, step: int, marks: list, prompts=PROMPTS) -> dict:
    return {"seq": seq, "type": "evaluation", "step": step, "model_version": step, "examples": [
        {"index": i, "key": example_key(prompts[i]), "prompt": prompts[i], "answers": _answers(i, step, mark)}
        for i, mark in enumerate(marks)]}


def eval_metrics_event(seq: int, step: int, marks: list) -> dict:
    rates = [sum(m) / len(m) if isinstance(m, list) else float(m) for m in marks]
    return {"seq": seq, "type": "metrics", "step": step,
            "values": {"eval/pass@1": sum(rates) / len(rates), "eval/reward_mean": sum(rates) / len(rates),
                       "eval/reward/accuracy_mean": sum(rates) / len(rates), "eval/examples": float(len(marks))}}


def evaluation_events(first_seq: int, step: int, marks: list, prompts=PROMPTS) -> list[dict]:
    """The metrics, then the answers, as the trainer's evaluator sends one evaluation."""
    return [eval_metrics_event(first_seq, step, marks), evaluation_event(first_seq + 1, step, marks, prompts)]


def store_evaluations(run, table: dict[int, list], prompts=PROMPTS) -> None:
    """Each {step: marks} stored through the ingest, in step order."""
    seq = EventCursor.objects.filter(run=run, source="trainer").values_list("last_seq", flat=True).first() or 0
    events = []
    for step, marks in sorted(table.items()):
        events += evaluation_events(seq + 1, step, marks, prompts)
        seq += 2
    ingest_batch(run, EventBatch.model_validate({"source": "trainer", "events": events}))


# Five examples over three evaluations, one of each class:
# 0 never passed, 1 always passed, 2 learned at step 10, 3 forgotten at step 10, 4 unstable.
FIVE_CLASSES = {0: [False, True, False, True, False],
                10: [False, True, True, False, True],
                20: [False, True, True, False, False]}
