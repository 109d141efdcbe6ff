"""A model-played dry run, asked in a request and played by the control plane's consumer.

The request validates and reads the row, stores an EnvironmentDryRun and answers 202 at once
(api/views/environments.py); `play` loads the model in the consumer's process (the web process
never imports torch) and writes its progress on the row: queued → loading → turn k of n → done,
with the report a typed dry run answers, or failed with why. The consumer's processes play one
dry run each at a time, so several users' dry runs run side by side up to its concurrency.
"""
from asgiref.sync import sync_to_async

from runs.background.tasks import enqueue
from runs.environments import model_play
from runs.environments.dry_run import Play, play_episode
from runs.models import EnvironmentDryRun

TASK = "play_dry_run"


def ask(environment, user, dataset, row_index: int, row: dict, params: dict) -> EnvironmentDryRun:
    """Stores the dry run and has it played once the request's transaction commits."""
    dry_run = EnvironmentDryRun.ask(environment, user, {
        "dataset": dataset.pk, "row": row_index, "row_values": row, "prompt_column": dataset.prompt_column,
        "model": params["model"], "max_turns": params["max_turns"], "tool_call_format": params["tool_call_format"]})
    enqueue(TASK, dry_run.pk)
    return dry_run


def play(dry_run_id: int) -> None:
    """Plays a dry run not finished yet; one delivered again after a lost consumer is played again."""
    dry_run = EnvironmentDryRun.objects.select_related("environment").filter(pk=dry_run_id).first()
    if dry_run is None or dry_run.finished:
        return
    asked = dry_run.asked
    if problem := model_play.model_play_problem(asked["model"]):  # the consumer's machine may differ
        dry_run.fail(problem)
        return
    dry_run.mark_loading()
    try:
        model_play.load(asked["model"])
        played = play_episode(dry_run.environment, Play(
            row=asked["row_values"], prompt_column=asked["prompt_column"], turns=None, model=asked["model"],
            max_turns=asked["max_turns"], tool_call_format=asked["tool_call_format"]),
            requested_by=dry_run.requested_by_id, on_turn=sync_to_async(dry_run.mark_turn))
    except Exception as exc:  # noqa: BLE001 (whatever stopped it is what the page shows)
        dry_run.fail(f"the dry run stopped: {type(exc).__name__}: {exc}")
        return
    dry_run.finish(report(dry_run, played))


def report(dry_run: EnvironmentDryRun, played: dict) -> dict:
    """What a typed dry run answers at once: the episode with the environment, dataset and row."""
    environment = dry_run.environment
    return {"environment": environment.pk, "kind": environment.kind, "dataset": dry_run.asked["dataset"],
            "row": dry_run.asked["row"], **played}
