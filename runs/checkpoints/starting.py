"""A run that starts from an earlier checkpoint (the `init_checkpoint` knob), named by id.

The checkpoint must be one its user may see (their own runs'; staff: any), of a run with the same
model and the same `lora` setting: the worker's vLLM starts from `model` and is given the
checkpoint's weights (or adapter) before the first rollout, which only fits the same model. The
run's worker fetches exactly that checkpoint with the run's own token (checkpoint_download.py).
"""
from runs.checkpoints.models.checkpoint import Checkpoint
from runs.training_runs.models import Run


def visible_checkpoint(user, checkpoint_id: int) -> Checkpoint | None:
    """Checkpoint `checkpoint_id` when `user` may see its run; None otherwise, as for one that does not exist."""
    runs = Run.objects.visible_to(user)
    return Checkpoint.objects.select_related("run").filter(pk=checkpoint_id, run__in=runs).first()


def not_visible(checkpoint_id: int) -> str:
    return f"no checkpoint {checkpoint_id} that you can see"


def init_checkpoint_problem(values: dict, user) -> str | None:
    """Why a config's init_checkpoint cannot be started from by `user`, or None (also when unset)."""
    checkpoint_id = values.get("init_checkpoint")
    if checkpoint_id is None:
        return None
    checkpoint = visible_checkpoint(user, checkpoint_id)
    if checkpoint is None:
        return not_visible(checkpoint_id)
    source = checkpoint.run.config
    if source.get("model") != values.get("model"):
        return (f"checkpoint {checkpoint_id} was trained from model {source.get('model')!r}, not "
                f"{values.get('model')!r}: set model to {source.get('model')!r}")
    if bool(source.get("lora")) != bool(values.get("lora")):
        holds, wanted = ("a LoRA adapter", "true") if source.get("lora") else ("whole weights", "false")
        return f"checkpoint {checkpoint_id} holds {holds}: set lora to {wanted}"
    return None


def checkpoint_run_starts_from(run: Run) -> Checkpoint | None:
    """The checkpoint `run` starts from, while its owner may still see it; None when it has none or
    may no longer (the caller refuses to start it)."""
    checkpoint_id = run.config.get("init_checkpoint")
    return None if checkpoint_id is None else visible_checkpoint(run.owner, checkpoint_id)


def starts_from(run: Run, checkpoint: Checkpoint) -> bool:
    """Whether `run` starts from `checkpoint`: the one checkpoint its token may download besides its own."""
    return run.config.get("init_checkpoint") == checkpoint.pk and checkpoint_run_starts_from(run) == checkpoint
