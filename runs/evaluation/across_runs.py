"""The same evaluation example in several runs, found by its key (a hash of its prompt).

Runs evaluated on the same set share keys; a prompt that appears twice in one run's set is
followed at its first place there.
"""
from runs.evaluation.passing import class_counts
from runs.evaluation.trajectories import Trajectory, followed, prompt_previews, trajectories


def first_by_key(found: dict[int, Trajectory]) -> dict[str, Trajectory]:
    by_key: dict[str, Trajectory] = {}
    for trajectory in found.values():  # in index order
        by_key.setdefault(trajectory.key, trajectory)
    return by_key


def shared_examples(runs: list) -> dict:
    """Per run, how its examples classify; then the keys at least two of the runs were evaluated
    on, those most runs share first, each with its class in every run that has it."""
    per_run = {run.pk: trajectories(run.pk) for run in runs}
    keyed = {run_id: first_by_key(found) for run_id, found in per_run.items()}
    holders: dict[str, list[int]] = {}
    for run_id, by_key in keyed.items():
        for key in by_key:
            holders.setdefault(key, []).append(run_id)
    shared = sorted((key for key, ids in holders.items() if len(ids) > 1), key=lambda key: -len(holders[key]))
    return {"runs": [_run_summary(run, per_run[run.pk]) for run in runs],
            "examples": _shared_rows(shared, holders, keyed)}


def _run_summary(run, found: dict[int, Trajectory]) -> dict:
    steps = {step for trajectory in found.values() for step in trajectory.steps}
    return {"run": run.pk, "name": run.name, "evaluations": len(steps), "examples": len(found),
            "counts": class_counts(t.classification for t in found.values())}


def _shared_rows(shared: list[str], holders: dict, keyed: dict) -> list[dict]:
    """The shared keys' rows, each previewed from the first run that has it."""
    previews: dict[str, str] = {}
    for run_id, by_key in keyed.items():
        mine = [by_key[key] for key in shared if holders[key][0] == run_id]
        by_index = prompt_previews(run_id, mine)
        previews.update((t.key, by_index.get(t.index, "")) for t in mine)
    return [{"key": key, "prompt_preview": previews.get(key, ""), "shared_by": len(holders[key]),
             "runs": {str(run_id): _place(keyed[run_id][key]) for run_id in holders[key]}} for key in shared]


def _place(trajectory: Trajectory) -> dict:
    return {"index": trajectory.index, "classification": trajectory.classification, "flips": trajectory.flips,
            "last_pass_rate": trajectory.pass_rates[-1]}


def example_across_runs(runs: list, key: str) -> dict | None:
    """The example with this key followed in each run (index None and no evaluations where a run
    was not evaluated on it); None when none of the runs was."""
    found = {run.pk: _followed_by_key(run, key) for run in runs}
    if not any(found.values()):
        return None
    prompt = next(example["prompt"] for example in found.values() if example)
    return {"key": key, "prompt": prompt, "runs": [_column(run, found[run.pk]) for run in runs]}


def _followed_by_key(run, key: str) -> dict | None:
    index = run.eval_outcomes.filter(key=key).order_by("index").values_list("index", flat=True).first()
    return None if index is None else followed(run, index)


def _column(run, example: dict | None) -> dict:
    if example is None:
        return {"run": run.pk, "name": run.name, "index": None, "classification": None, "flips": None,
                "evaluations": []}
    return {"run": run.pk, "name": run.name,
            **{name: example[name] for name in ("index", "classification", "flips", "evaluations")}}
