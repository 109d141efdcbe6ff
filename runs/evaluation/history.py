"""A run's evaluations, one row each: how its examples did, and which changed since the one before."""
from collections import defaultdict
from dataclasses import dataclass
from statistics import fmean

from runs.evaluation.passing import passes
from runs.telemetry.models import MetricPoint
from worker.trainer.metric_names import EVAL_PREFIX

OUTCOME_FILTERS = {
    "passed": "passes at this evaluation",
    "failed": "fails at this evaluation",
    "flipped": "passes where it failed at the evaluation before, or fails where it passed",
}


def run_evaluations(run) -> dict:
    """Whether the run evaluates, how, and its evaluations so far."""
    config = run.config or {}
    return {"configured": bool(config.get("eval_steps")), "eval_steps": config.get("eval_steps") or 0,
            "eval_samples": config.get("eval_samples") or 1, "evaluations": evaluation_rows(run)}


def evaluation_rows(run) -> list[dict]:
    """Oldest first: step, model version, examples, passing, pass@1, mean score, flips and eval/ metrics."""
    by_step = defaultdict(list)
    outcomes = run.eval_outcomes.order_by("step", "index")
    for row in outcomes.values_list("step", "model_version", "index", "passed", "samples", "score"):
        by_step[row[0]].append(row)
    metrics = _eval_metrics(run)
    rows, before = [], None
    for step, found in by_step.items():  # in step order: the dict keeps the query's
        states = {index: passes(passed, samples) for _, _, index, passed, samples, _ in found}
        scores = [score for *_, score in found if score is not None]
        rows.append({
            "step": step, "model_version": max(row[1] for row in found), "examples": len(found),
            "passing": sum(states.values()),
            "pass_at_1": fmean(passed / samples if samples else 0.0 for _, _, _, passed, samples, _ in found),
            "mean_score": fmean(scores) if scores else None,
            "previous_step": before[0] if before else None,
            **flips(before[1] if before else None, states),
            "metrics": metrics.get(step, {}),
        })
        before = (step, states)
    return rows


def flips(before: dict[int, bool] | None, now: dict[int, bool]) -> dict:
    """How many examples (present in both) turned to passing and to failing; None at the first evaluation."""
    if before is None:
        return {"flipped_to_pass": None, "flipped_to_fail": None}
    shared = before.keys() & now.keys()
    return {"flipped_to_pass": sum(now[i] and not before[i] for i in shared),
            "flipped_to_fail": sum(before[i] and not now[i] for i in shared)}


def _eval_metrics(run) -> dict[int, dict[str, float]]:
    """The eval/ metrics the trainer reported (pass@k, per-function means, ...), per step."""
    found: defaultdict[int, dict[str, float]] = defaultdict(dict)
    points = MetricPoint.objects.filter(run=run, name__startswith=EVAL_PREFIX).values_list("step", "name", "value")
    for step, name, value in points:
        found[step][name] = value
    return found


@dataclass
class EvaluationAt:
    """One evaluation's pass states beside those of the evaluation before it."""
    step: int
    previous_step: int | None
    states: dict[int, bool]
    before: dict[int, bool]

    def indices(self, outcome: str) -> list[int]:
        keep = {"passed": lambda i: self.states[i], "failed": lambda i: not self.states[i],
                "flipped": lambda i: i in self.before and self.before[i] != self.states[i]}[outcome]
        return sorted(index for index in self.states if keep(index))

    def marks(self, index: int) -> dict:
        before = self.before.get(index)
        return {"passes": self.states.get(index, False), "previously_passed": before,
                "flipped": before is not None and before != self.states.get(index)}


def evaluation_at(run, step: int) -> EvaluationAt | None:
    states = _pass_states(run, step)
    if not states:
        return None
    previous = run.eval_outcomes.filter(step__lt=step).order_by("-step").values_list("step", flat=True).first()
    return EvaluationAt(step, previous, states, _pass_states(run, previous) if previous is not None else {})


def _pass_states(run, step: int) -> dict[int, bool]:
    rows = run.eval_outcomes.filter(step=step).values_list("index", "passed", "samples")
    return {index: passes(passed, samples) for index, passed, samples in rows}


def evaluated_steps(run) -> list[int]:
    return list(run.eval_outcomes.order_by("step").values_list("step", flat=True).distinct())
