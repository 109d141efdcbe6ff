"""Checkpoints that let a run continue exactly: weights, optimizer, schedule, RNG, data position.

Layout: <output_dir>/checkpoints/step-<N>/ with the model and tokenizer as
`save_pretrained` writes them (so a checkpoint is also a servable model) and
`trainer_state.pt` for the step, schedule, RNG and data position. The optimizer state is in
`optimizer/`, written by torch.distributed.checkpoint keyed by parameter name: each process
writes its shard, and a checkpoint saved by N processes loads into M (one included). A LoRA
checkpoint holds the adapter; the last of a run also holds the merged model in `merged/`, ready
to serve. Written to a temporary folder and renamed, so a crash never leaves a half
checkpoint that looks whole. Everything is read back as tensors and plain values only
(plain_reading.py): a checkpoint that names anything else is refused.
"""
import random
import shutil
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

# torch.distributed.checkpoint warns at every save and load in one process that it assumes one:
# what a one-process trainer means, not news for the run's log. Filtered once for the process
# (catch_warnings around each call would race the rollout threads' own warnings).
warnings.filterwarnings("ignore", message="torch.distributed is disabled")

STATE_FILE = "trainer_state.pt"
OPTIMIZER_DIR = "optimizer"
MERGED_DIR = "merged"


@dataclass
class TrainerState:
    step: int
    model_version: int
    data_position: int
    samples_seen: int = 0


def checkpoint_dir(output_dir: Path, step: int) -> Path:
    return Path(output_dir) / "checkpoints" / f"step-{step:07d}"


def _rng_states() -> dict:
    """The generators' states as tensors and plain values, which torch.load(weights_only=True) reads."""
    version, internal, gauss_next = random.getstate()
    numpy_state = np.random.get_state(legacy=False)
    return {"python": [version, list(internal), gauss_next],
            "numpy": {"bit_generator": numpy_state["bit_generator"],
                      "key": torch.from_numpy(numpy_state["state"]["key"].astype(np.int64)),
                      "pos": int(numpy_state["state"]["pos"]), "has_gauss": int(numpy_state["has_gauss"]),
                      "gauss": float(numpy_state["gauss"])},
            "torch": torch.get_rng_state()}


def _restore_rng(states: dict) -> None:
    version, internal, gauss_next = states["python"]
    random.setstate((version, tuple(internal), gauss_next))
    np.random.set_state(_numpy_state(states["numpy"]))
    torch.set_rng_state(states["torch"])


def _numpy_state(saved):
    """np.random.set_state's tuple: from the plain dict, or as checkpoints before it kept it."""
    if not isinstance(saved, dict):
        return saved
    key = saved["key"].numpy().astype(np.uint32)
    return saved["bit_generator"], key, saved["pos"], saved["has_gauss"], saved["gauss"]


def partial_dir(output_dir: Path, step: int) -> Path:
    final = checkpoint_dir(output_dir, step)
    return final.with_name(final.name + ".partial")


def save_checkpoint(output_dir: Path, state: TrainerState, model, tokenizer, optimizer, scheduler,
                    keep_last: int | None = None, merged: bool = False, on_folder_ready=lambda: None) -> Path:
    """The leader's save. `merged`: a LoRA model's checkpoint also holds the merged model (the run's
    last one). `on_folder_ready`: called once the folder exists, for the other processes to
    write their parts (write_shared_parts) beside the leader's."""
    from worker.trainer.distributed.sharding import is_sharded
    from worker.trainer.training.lora import has_adapter, save_merged_model

    final, partial = checkpoint_dir(output_dir, state.step), partial_dir(output_dir, state.step)
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    on_folder_ready()
    write_shared_parts(partial, model, optimizer, leads=True)
    if not is_sharded(model):
        model.save_pretrained(partial, safe_serialization=True)
    if tokenizer is not None:
        tokenizer.save_pretrained(partial)
    if merged and has_adapter(model):
        save_merged_model(model, partial / MERGED_DIR, tokenizer)
    torch.save({
        "state": asdict(state), "scheduler": scheduler.state_dict() if scheduler is not None else None,
        "rng": _rng_states(),
    }, partial / STATE_FILE)
    shutil.rmtree(final, ignore_errors=True)
    partial.rename(final)
    if keep_last:
        prune_checkpoints(output_dir, keep_last)
    return final


def write_shared_parts(folder: Path, model, optimizer, leads: bool) -> None:
    """What every process writes together: the optimizer's shards, and a sharded model's weights."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict

    from worker.trainer.checkpoints.relay import relay_to_leader
    from worker.trainer.weights.gathered import write_whole_model
    from worker.trainer.distributed.sharding import is_sharded
    from worker.trainer.distributed.topology import Topology

    if is_sharded(model):
        write_whole_model(model, folder, leads)
    state = get_optimizer_state_dict(model, _plain(optimizer))
    dcp.save({"optimizer": state}, checkpoint_id=folder / OPTIMIZER_DIR)
    relay_to_leader(folder, Topology.from_env())  # a trainer over machines with no shared disk


def _plain(optimizer):
    """The torch optimizer inside accelerate's wrapper."""
    return getattr(optimizer, "optimizer", optimizer)


def prune_checkpoints(output_dir: Path, keep_last: int, may_remove=lambda folder: True) -> None:
    """Removes the complete checkpoints older than the newest `keep_last`, those `may_remove` allows."""
    complete = sorted(p for p in (Path(output_dir) / "checkpoints").glob("step-*") if not p.name.endswith(".partial"))
    for old in complete[:-keep_last]:
        if may_remove(old):
            shutil.rmtree(old, ignore_errors=True)


def load_trainer_state(checkpoint: Path, model, optimizer, scheduler) -> TrainerState:
    """Restores optimizer, scheduler and RNG from a checkpoint (the model loads from the same
    folder). Every process calls it: each reads its shard of the optimizer state."""
    from worker.trainer.checkpoints.plain_reading import load_state

    saved = load_state(Path(checkpoint) / STATE_FILE)
    if "optimizer" in saved:  # written before the optimizer had a folder of its own
        _refuse_if_sharded(model, checkpoint)
        optimizer.load_state_dict(saved["optimizer"])
    else:
        _load_optimizer(Path(checkpoint) / OPTIMIZER_DIR, model, optimizer)
    if scheduler is not None and saved["scheduler"] is not None:
        scheduler.load_state_dict(saved["scheduler"])
    _restore_rng(saved["rng"])
    return TrainerState(**saved["state"])


def _refuse_if_sharded(model, checkpoint: Path) -> None:
    """An optimizer state saved whole, by position, cannot fill a sharded optimizer's shards."""
    from worker.trainer.distributed.sharding import is_sharded

    if is_sharded(model):
        raise ValueError(f"{checkpoint} keeps its optimizer state in the older whole format, which fsdp2 cannot "
                         f"shard: resume it with distributed=ddp or none, then later checkpoints resume anywhere")


def _load_optimizer(folder: Path, model, optimizer) -> None:
    from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict, set_optimizer_state_dict

    from worker.trainer.checkpoints.plain_reading import load_saved_state

    plain = _plain(optimizer)
    # The optimizer's own layout, states made (zeros) so that the checkpoint's fill them.
    state = {"optimizer": get_optimizer_state_dict(model, plain)}
    load_saved_state(state, folder)
    set_optimizer_state_dict(model, plain, state["optimizer"])


def checkpoint_size(checkpoint: Path) -> int:
    return sum(f.stat().st_size for f in Path(checkpoint).rglob("*") if f.is_file())
