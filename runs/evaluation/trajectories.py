"""Each evaluation example of a run across its evaluations: "one example, followed".

Only the light columns are read to classify every example (pass counts per step); the
answers themselves are read for the one example being followed.
"""
from collections import defaultdict
from dataclasses import dataclass, field

from runs.evaluation.models import EvalOutcome
from runs.evaluation.passing import class_counts, classify, flip_count, passes
from runs.evaluation.preview import prompt_preview


@dataclass
class Trajectory:
    index: int
    key: str
    steps: list[int] = field(default_factory=list)
    pass_rates: list[float] = field(default_factory=list)
    states: list[bool] = field(default_factory=list)

    @property
    def classification(self) -> str:
        return classify(self.states)

    @property
    def flips(self) -> int:
        return flip_count(self.states)


def trajectories(run_id: int) -> dict[int, Trajectory]:
    """Per example index, in index order."""
    found: dict[int, Trajectory] = {}
    rows = (EvalOutcome.objects.filter(run_id=run_id).order_by("index", "step")
            .values_list("index", "key", "step", "passed", "samples"))
    for index, key, step, passed, samples in rows:
        trajectory = found.get(index) or found.setdefault(index, Trajectory(index, key))
        trajectory.steps.append(step)
        trajectory.pass_rates.append(passed / samples if samples else 0.0)
        trajectory.states.append(passes(passed, samples))
    return found


def prompt_previews(run_id: int, chosen) -> dict[int, str]:
    """Per index of the `chosen` trajectories, its prompt in one line, read at its last evaluation
    (one query per distinct last step: usually one)."""
    by_last_step = defaultdict(list)
    for trajectory in chosen:
        by_last_step[trajectory.steps[-1]].append(trajectory.index)
    previews: dict[int, str] = {}
    for step, indices in by_last_step.items():
        rows = EvalOutcome.objects.filter(run_id=run_id, step=step, index__in=indices).values_list("index", "prompt")
        previews.update((index, prompt_preview(prompt)) for index, prompt in rows)
    return previews


def examples_overview(run, classification: str | None = None) -> dict:
    """Every example (or those of one class) with its pass rate at each of the run's evaluation steps."""
    found = trajectories(run.pk)
    steps = sorted({step for trajectory in found.values() for step in trajectory.steps})
    shown = [t for t in found.values() if classification in (None, t.classification)]
    previews = prompt_previews(run.pk, shown)
    return {
        "steps": steps,
        "counts": class_counts(t.classification for t in found.values()),
        "examples": [{"index": t.index, "key": t.key, "prompt_preview": previews.get(t.index, ""),
                      "pass_rates": _aligned(t, steps), "flips": t.flips, "classification": t.classification}
                     for t in shown],
    }


def _aligned(trajectory: Trajectory, steps: list[int]) -> list[float | None]:
    """Its pass rates at the run's evaluation steps, None where it was not evaluated."""
    rates = dict(zip(trajectory.steps, trajectory.pass_rates))
    return [rates.get(step) for step in steps]


def followed(run, index: int) -> dict | None:
    """One example at every evaluation, with its answers; None when the run has no such example."""
    rows = list(run.eval_outcomes.filter(index=index).order_by("step").defer("prompt"))
    if not rows:
        return None
    states = [passes(row.passed, row.samples) for row in rows]
    return {"index": index, "key": rows[-1].key,
            "prompt": run.eval_outcomes.filter(pk=rows[-1].pk).values_list("prompt", flat=True).first(),
            "classification": classify(states), "flips": flip_count(states),
            "evaluations": [outcome_at(row) for row in rows]}


def outcome_at(row: EvalOutcome) -> dict:
    return {"step": row.step, "model_version": row.model_version, "passed": row.passed, "samples": row.samples,
            "pass_rate": row.pass_rate, "passes": passes(row.passed, row.samples), "score": row.score,
            "answers": row.answers}
