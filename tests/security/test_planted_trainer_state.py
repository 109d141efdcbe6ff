"""Attack: whoever holds a run's token while it runs (its worker, anyone reading the broker, a member
of its Ray cluster) uploads a checkpoint whose files carry a pickle that runs code, for the worker
that later resumes the run to unpickle. Resuming refuses it naming the file, and the code never
runs; a checkpoint the trainer wrote still resumes exactly, older ones included."""
import pickle
import random
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tests.support.tiny_training import optimizer_and_scheduler, tiny_model, train_one_step  # noqa: E402
from worker.trainer.checkpoints.plain_reading import CheckpointFileRefused, load_saved_state  # noqa: E402
from worker.trainer.checkpoints.saving import (  # noqa: E402
    OPTIMIZER_DIR, STATE_FILE, TrainerState, load_trainer_state, save_checkpoint,
)


class RunsCode:
    """Unpickled, it writes the marker file: what a planted pickle would do, harmlessly."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return exec, (f"open({self.marker!r}, 'w').write('ran')",)


def saved_checkpoint(tmp_path):
    model = tiny_model()
    optimizer, scheduler = optimizer_and_scheduler(model)
    train_one_step(model, optimizer, scheduler)
    path = save_checkpoint(tmp_path / "run", TrainerState(step=1, model_version=1, data_position=16),
                           model, None, optimizer, scheduler)
    return path


def resume(path):
    model = transformers.LlamaForCausalLM.from_pretrained(path)
    optimizer, scheduler = optimizer_and_scheduler(model)
    return load_trainer_state(path, model, optimizer, scheduler)


def test_a_trainer_state_that_runs_code_is_refused_naming_the_file(tmp_path):
    path, marker = saved_checkpoint(tmp_path), tmp_path / "marker"
    state = torch.load(path / STATE_FILE, weights_only=True)
    torch.save({**state, "rng": {**state["rng"], "python": RunsCode(marker)}}, path / STATE_FILE)
    named = re.escape(str(path / STATE_FILE))
    with pytest.raises(CheckpointFileRefused, match=rf"{named} is not read: .*GLOBAL exec was not an allowed global"):
        resume(path)
    assert not marker.exists()


def test_an_optimizer_index_that_runs_code_is_refused_naming_the_file(tmp_path):
    path, marker = saved_checkpoint(tmp_path), tmp_path / "marker"
    index = path / OPTIMIZER_DIR / ".metadata"
    index.write_bytes(pickle.dumps(RunsCode(marker)))
    with pytest.raises(CheckpointFileRefused, match=rf"{re.escape(str(index))} is not read: .*builtins.exec"):
        resume(path)
    assert not marker.exists()


def test_an_optimizer_value_that_runs_code_is_refused(tmp_path):
    import torch.distributed.checkpoint as dcp

    folder, marker = tmp_path / "optimizer", tmp_path / "marker"
    dcp.save({"lr": RunsCode(marker), "exp_avg": torch.zeros(2)}, checkpoint_id=folder)
    target = {"lr": 0.0, "exp_avg": torch.ones(2)}
    refusal = rf"{re.escape(str(folder))} is not read: .*its value lr is not: Unsupported global: GLOBAL exec"
    with pytest.raises(CheckpointFileRefused, match=refusal):
        load_saved_state(target, folder)
    assert not marker.exists()


def test_a_saved_checkpoint_resumes_exactly(tmp_path):
    model = tiny_model()
    optimizer, scheduler = optimizer_and_scheduler(model)
    train_one_step(model, optimizer, scheduler)
    random.seed(5), np.random.seed(5), torch.manual_seed(5)
    np.random.standard_normal()  # a cached Gaussian is part of numpy's state too
    path = save_checkpoint(tmp_path, TrainerState(step=3, model_version=2, data_position=48, samples_seen=96),
                           model, None, optimizer, scheduler)
    expected = random.random(), np.random.standard_normal(3).tolist(), torch.rand(2).tolist()
    random.seed(0), np.random.seed(0), torch.manual_seed(0)

    restored = transformers.LlamaForCausalLM.from_pretrained(path)
    optimizer2, scheduler2 = optimizer_and_scheduler(restored)
    state = load_trainer_state(path, restored, optimizer2, scheduler2)
    assert state == TrainerState(step=3, model_version=2, data_position=48, samples_seen=96)
    assert (random.random(), np.random.standard_normal(3).tolist(), torch.rand(2).tolist()) == expected
    assert scheduler2.state_dict() == scheduler.state_dict()
    for name, value in optimizer.state_dict()["state"][0].items():
        assert torch.equal(optimizer2.state_dict()["state"][0][name], value), name


def test_a_checkpoint_of_the_earlier_format_still_resumes(tmp_path):
    """Before, numpy's RNG state was kept as numpy's own tuple (an array inside): read through a
    narrow allowlist of numpy's array types, never by unpickling anything."""
    path = saved_checkpoint(tmp_path)
    state = torch.load(path / STATE_FILE, weights_only=True)
    np.random.seed(7)
    legacy_numpy = np.random.get_state()
    expected = np.random.random()
    state["rng"] = {**state["rng"], "python": random.getstate(), "numpy": legacy_numpy}
    torch.save(state, path / STATE_FILE)
    np.random.seed(0)
    assert resume(path).step == 1
    assert np.random.random() == expected
