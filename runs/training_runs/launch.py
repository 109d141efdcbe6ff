"""Builds the frozen launch spec a worker receives (worker.trainer.spec.LaunchSpec)."""
import secrets
from pathlib import Path

from django.conf import settings
from django.urls import reverse

from runs.checkpoints.models.checkpoint import Checkpoint
from runs.checkpoints.starting import checkpoint_run_starts_from, not_visible
from runs.datasets.launch_spec import dataset_spec
from runs.rewards.model_rewards import loads_model_itself, takes_api_key
from runs.rewards.models.endpoint_hosts import endpoint_problem
from runs.rewards.names import shared_name_problem
from runs.training_runs.models import IllegalTransition, Run
from worker.trainer.models.paths import model_problem
from worker.trainer.spec import LaunchSpec


def build_launch_spec(run: Run, token: str, resume_from: Checkpoint | None = None) -> dict:
    if problem := model_problem(run.config["model"]):  # stored before names were required
        raise IllegalTransition(run, "queued", f"run {run.pk} cannot start: {problem}; clone it and change model")
    for chosen in filter(None, (run.dataset, run.eval_dataset)):  # checked since, or made before checks waited
        if problem := chosen.readiness_problem():
            raise IllegalTransition(run, "queued", f"run {run.pk} cannot start: {problem}")
    ingest_url = settings.PUBLIC_URL + reverse("run-events", args=[run.pk])
    # Beside the events: <uploads_url><step>/files/..., .../complete, .../archive (checkpoint_upload.py).
    uploads_url = ingest_url.removesuffix("events/") + "uploads/"
    dataset = dataset_spec(run.dataset)
    if dataset["kind"] == "file":  # fetched with the run's token (runs/training_runs/views/run_dataset.py)
        dataset["url"] = settings.PUBLIC_URL + reverse("run-dataset", args=[run.pk])
    eval_dataset = dataset_spec(run.eval_dataset) if run.eval_dataset else None
    if eval_dataset and eval_dataset["kind"] == "file":
        eval_dataset["url"] = settings.PUBLIC_URL + reverse("run-dataset", args=[run.pk]) + "?role=eval"
    run_rewards = list(run.run_rewards.select_related("reward_function"))
    run_eval_rewards = list(run.run_eval_rewards.select_related("reward_function"))
    # Checked again here: a run stored before the rule, or changed in the admin.
    if problem := shared_name_problem(rr.reward_function for rr in run_rewards + run_eval_rewards):
        raise IllegalTransition(run, "queued", f"run {run.pk} cannot start: {problem}")
    rewards = [rr.reward_function.launch_spec(rr.weight) for rr in run_rewards]
    eval_rewards = [rr.reward_function.launch_spec(rr.weight) for rr in run_eval_rewards]
    check_reward_models(run, rewards + eval_rewards)
    spec = LaunchSpec.model_validate({
        "run_id": run.pk,
        "attempt": run.attempt,
        "model": run.config["model"],
        "dataset": dataset,
        "rewards": rewards,
        "environment": run.environment.launch_spec() if run.environment else None,
        "eval_dataset": eval_dataset,
        "eval_rewards": eval_rewards,
        # The keys themselves are fetched there with the run's token: the spec is stored and shown.
        "secrets_url": (settings.PUBLIC_URL + reverse("run-secrets", args=[run.pk])
                        if any(reward["has_api_key"] for reward in rewards + eval_rewards) else None),
        "config": run.config,
        "ingest": {"url": ingest_url, "token": token},
        "uploads_url": uploads_url,
        "shared_disk": shared_disk_marker(settings.RUNS_DIR / str(run.pk)),
        "output_dir": str(settings.RUNS_DIR / str(run.pk)),
        "resume_from": resume_from.path if resume_from else None,
        "resume_url": (f"{uploads_url}{resume_from.step}/archive"
                       if resume_from is not None and resume_from.in_store else None),
        **({} if resume_from is not None else start_from_spec(run)),
    })
    return spec.model_dump(mode="json")


def check_reward_models(run: Run, rewards: list[dict]) -> None:
    """A served judge's or a reward model's model is loaded by the worker: a name, as the run's own
    model (checked again here for rewards saved before the rule, or edited in the admin). An
    endpoint judge's host must still be one judges may call (endpoint_hosts.py): a name may
    resolve elsewhere since it was saved."""
    for reward in rewards:
        kind, params = reward["kind"], reward["params"]
        problem = (model_problem(str(params.get("model", ""))) if loads_model_itself(kind, params) else
                   endpoint_problem(str(params.get("base_url", ""))) if takes_api_key(kind, params) else None)
        if problem:
            raise IllegalTransition(run, "queued", f"run {run.pk} cannot start: reward {reward['name']!r}: {problem}")


def start_from_spec(run: Run) -> dict:
    """Where the worker finds the checkpoint config.init_checkpoint names: its folder as written, and
    the download its worker is allowed with this run's token (checkpoint_download.py). Refused
    when the run's owner may no longer see it (deleted since)."""
    if run.config.get("init_checkpoint") is None:
        return {}
    checkpoint = checkpoint_run_starts_from(run)
    if checkpoint is None:
        raise IllegalTransition(run, "queued", f"run {run.pk} cannot start: "
                                f"{not_visible(run.config['init_checkpoint'])} (deleted since?); "
                                "clone it and choose another init_checkpoint")
    download = reverse("run-checkpoint-download", args=[checkpoint.run_id, checkpoint.pk])
    return {"init_from": checkpoint.path, "init_url": f"{settings.PUBLIC_URL}{download}?for_run={run.pk}"}


def shared_disk_marker(output_dir: Path) -> dict:
    """Writes a fresh secret beside the run's output: a worker that can read it shares this disk
    and needs not upload its checkpoints (worker/trainer/checkpoints/keeping.py)."""
    marker = Path(output_dir) / ".control-plane-disk"
    marker.parent.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_urlsafe(24)
    marker.write_text(secret)
    return {"path": str(marker), "secret": secret}


def without_secrets(spec: dict) -> dict:
    hidden = {**spec, "ingest": {**spec["ingest"], "token": "***"}}
    if spec.get("shared_disk"):
        hidden["shared_disk"] = {**spec["shared_disk"], "secret": "***"}
    return hidden
