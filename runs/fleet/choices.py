"""What the new-run form offers: the models found on this machine and the worker pools in use."""
from django.conf import settings

from runs.configs.models import TrainingConfig
from runs.training_runs.models import Run
from worker.trainer.config import DEFAULT_MODEL
from worker.trainer.models.paths import is_model_dir


def found_models() -> list[dict]:
    """The default model, then every model directory under DATA_DIR/models (one with a config.json).

    The default is offered by its hub id: a worker resolves it to its own prepared copy
    (worker.trainer.models.paths.resolve_model_path), wherever that worker runs.
    """
    prepared_default = DEFAULT_MODEL.rsplit("/", 1)[-1]
    models = [{"value": DEFAULT_MODEL, "label": "default (SmolLM2-135M-Instruct)"}]
    folder = settings.MODELS_DIR
    if folder.is_dir():
        for path in sorted(folder.iterdir()):
            if path.name != prepared_default and path.is_dir() and is_model_dir(path):
                models.append({"value": str(path), "label": f"{path.name} (in {folder})"})
    return models


def worker_pools(user) -> list[str]:
    """Pools named by the user's configs and runs, "default" first: the queues workers listen on."""
    pools = {"default"}
    for values in TrainingConfig.objects.visible_to(user).values_list("values", flat=True):
        pools.add((values or {}).get("worker_pool") or "default")
    for config in Run.objects.visible_to(user).order_by("-created_at").values_list("config", flat=True)[:200]:
        pools.add((config or {}).get("worker_pool") or "default")
    return ["default", *sorted(pools - {"default"})]
