"""The same prompt's completions from each run at one step, side by side.

Runs log a few groups of completions every logging step. For a chosen step each run
contributes the samples of its nearest logged step at or before it (or the first one after,
if it logged nothing that early); completions are then lined up by prompt text, so a
prompt that several runs saw appears once with a column per run.
"""
from runs.telemetry.models import Sample

MAX_SAMPLES_PER_RUN = 256
FIELDS = ["group", "completion", "rewards", "total_reward", "advantage", "num_tokens", "finish_reason",
          "staleness", "model_version", "turns", "end_reason"]


def sample_step_range(run_id: int) -> tuple[int, int] | None:
    steps = Sample.objects.filter(run_id=run_id).order_by("step").values_list("step", flat=True)
    first = steps.first()
    if first is None:
        return None
    last = steps.reverse().first()
    return None if last is None else (first, last)


def nearest_sample_step(run_id: int, step: int) -> int | None:
    steps = Sample.objects.filter(run_id=run_id)
    before = steps.filter(step__lte=step).order_by("-step").values_list("step", flat=True).first()
    if before is not None:
        return before
    return steps.filter(step__gt=step).order_by("step").values_list("step", flat=True).first()


def default_step(ranges: dict[int, tuple[int, int] | None]) -> int | None:
    """The last step every run that logged samples has reached: where all of them have some."""
    lasts = [span[1] for span in ranges.values() if span]
    return min(lasts, default=None)


def side_by_side(run_ids: list[int], step: int | None) -> dict:
    ranges = {run_id: sample_step_range(run_id) for run_id in run_ids}
    if step is None:
        step = default_step(ranges)
    chosen = {run_id: nearest_sample_step(run_id, step) if step is not None and ranges[run_id] else None
              for run_id in run_ids}
    by_prompt: dict[str, dict[str, list]] = {}
    for run_id, run_step in chosen.items():
        if run_step is None:
            continue
        rows = Sample.objects.filter(run_id=run_id, step=run_step).values("prompt", *FIELDS)[:MAX_SAMPLES_PER_RUN]
        for row in rows:
            by_prompt.setdefault(row.pop("prompt"), {}).setdefault(str(run_id), []).append(row)
    # Prompts that more runs share come first: those are the ones to compare.
    ordered = sorted(by_prompt.items(), key=lambda item: -len(item[1]))
    return {
        "step": step,
        "steps": {str(run_id): run_step for run_id, run_step in chosen.items()},
        "ranges": {str(run_id): list(span) if span else None for run_id, span in ranges.items()},
        "prompts": [{"prompt": prompt, "completions": completions} for prompt, completions in ordered],
    }
