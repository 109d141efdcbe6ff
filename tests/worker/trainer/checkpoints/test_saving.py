"""Checkpoint round trip: a resumed trainer has the same weights, optimizer, schedule, RNG and position."""
import random

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tests.support.tiny_training import optimizer_and_scheduler, tiny_model, train_one_step  # noqa: E402
from worker.trainer.checkpoints.saving import (  # noqa: E402
    TrainerState, checkpoint_dir, checkpoint_size, load_trainer_state, save_checkpoint,
)


def test_round_trip_restores_everything(tmp_path):
    model = tiny_model()
    optimizer, scheduler = optimizer_and_scheduler(model)
    train_one_step(model, optimizer, scheduler)
    random.seed(5)
    torch.manual_seed(5)
    path = save_checkpoint(tmp_path, TrainerState(step=1, model_version=1, data_position=16, samples_seen=64),
                           model, None, optimizer, scheduler)
    expected_random, expected_torch = random.random(), torch.rand(1)
    train_one_step(model, optimizer, scheduler)
    continued = [p.detach().clone() for p in model.parameters()]

    restored = transformers.LlamaForCausalLM.from_pretrained(path)
    optimizer2, scheduler2 = optimizer_and_scheduler(restored)
    state = load_trainer_state(path, restored, optimizer2, scheduler2)
    assert state == TrainerState(step=1, model_version=1, data_position=16, samples_seen=64)
    assert (random.random(), torch.rand(1)) == (expected_random, expected_torch)
    assert scheduler2.last_epoch == scheduler.last_epoch - 1
    train_one_step(restored, optimizer2, scheduler2)
    for mine, theirs in zip(continued, restored.parameters()):
        assert torch.allclose(mine, theirs, atol=1e-6)


def test_checkpoint_is_a_servable_model_folder(tmp_path):
    model = tiny_model()
    optimizer, scheduler = optimizer_and_scheduler(model)
    path = save_checkpoint(tmp_path, TrainerState(2, 2, 0), model, None, optimizer, scheduler)
    assert path == checkpoint_dir(tmp_path, 2)
    assert (path / "config.json").exists() and (path / "model.safetensors").exists()
    assert checkpoint_size(path) > 0
    assert not list(tmp_path.glob("checkpoints/*.partial"))


def test_only_the_newest_checkpoints_are_kept(tmp_path):
    model = tiny_model()
    optimizer, scheduler = optimizer_and_scheduler(model)
    for step in (1, 2, 3, 4):
        save_checkpoint(tmp_path, TrainerState(step, step, 0), model, None, optimizer, scheduler, keep_last=2)
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["step-0000003", "step-0000004"]
