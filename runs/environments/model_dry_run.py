"""A dry run of an environment played by the model, asked in a request and played by the control
plane's consumer (runs/dry_runs/jobs.py, as a judge's or a reward model's dry run).

The request validates and reads the row, stores an EnvironmentDryRun and answers 202 at once
(runs/environments/views.py); `play` loads the model in the consumer's process (the web process
never imports torch) and marks each turn: queued → loading → turn k of n → done, with the report
a typed dry run answers, or failed with why. The consumer's processes play one dry run each at a
time, so several users' dry runs run side by side up to its concurrency.
"""
from asgiref.sync import sync_to_async

from runs.background.limits import ENVIRONMENT_DRY_RUNS
from runs.dry_runs import jobs as dry_run_jobs
from runs.dry_runs import model_play
from runs.dry_runs.jobs import DryRunJob
from runs.environments.dry_run import Play, play_episode
from runs.environments.models.dry_run import EnvironmentDryRun

TASK = "play_dry_run"


def ask(environment, user, dataset, row_index: int, row: dict, params: dict) -> EnvironmentDryRun:
    """Stores the dry run, in a place of the user's, and has it played once the request commits."""
    return dry_run_jobs.ask(JOB, environment, user, {
        "dataset": dataset.pk, "row": row_index, "row_values": row, "prompt_column": dataset.prompt_column,
        "model": params["model"], "max_turns": params["max_turns"], "tool_call_format": params["tool_call_format"]})


def problem(dry_run: EnvironmentDryRun) -> str | None:
    return model_play.model_play_problem(dry_run.asked["model"])  # the consumer's machine may differ


def play(dry_run: EnvironmentDryRun) -> dict:
    """The episode, played by the model loaded here (kept loaded for the next dry run)."""
    asked = dry_run.asked
    model_play.load(asked["model"])
    played = play_episode(dry_run.environment, Play(
        row=asked["row_values"], prompt_column=asked["prompt_column"], turns=None, model=asked["model"],
        max_turns=asked["max_turns"], tool_call_format=asked["tool_call_format"]),
        requested_by=dry_run.requested_by_id, on_turn=sync_to_async(dry_run.mark_progress))
    return report(dry_run, played)


def report(dry_run: EnvironmentDryRun, played: dict) -> dict:
    """What a typed dry run answers at once: the episode with the environment, dataset and row."""
    environment = dry_run.environment
    return {"environment": environment.pk, "kind": environment.kind, "dataset": dry_run.asked["dataset"],
            "row": dry_run.asked["row"], **played}


JOB = DryRunJob(task=TASK, table=EnvironmentDryRun, places=ENVIRONMENT_DRY_RUNS, problem=problem, work=play)
