"""One training step is the same step in one process, in two under DDP and in two under FSDP2.

The probe (worker/trainer/training/probe.py) takes one AdamW step (lr 1e-3, eps 1e-8, fp32)
on a seeded batch of 4 groups x 4 completions, 4 micro-batches of 2 rows, through the trainer's
own step code, with the gradient clipped (its norm is above MAX_GRAD_NORM, so clipping runs on
sharded gradients too) and a KL term against a reference model (sharded too under FSDP2), and
saves what it computed; under torchrun each of the 2 processes
trains every second micro-batch and their gradients are averaged. Only the order of the fp32
sums differs, so the tolerances are rounding's:
- loss and gradient norm: 1e-6 relative (a norm of shards sums in another order);
- gradients: 1e-5 of the largest element;
- updated parameters: 5e-6, 0.5% of lr. Where a gradient is near AdamW's eps, the update
  magnifies its rounding by up to lr/eps = 1e5.
- FSDP2 holds at most 0.6x of DDP's parameter, gradient and optimizer bytes in each process
  (the issue's bound; bench/distributed.py measures it).
"""
import subprocess
import sys

import pytest
import torch

FIGURE_REL = 1e-6
GRAD_OF_LARGEST = 1e-5
PARAM_ATOL = 5e-6
LEARNING_RATE = 1e-3  # the probe's
MAX_GRAD_NORM = 1e-4  # below the tiny model's gradient norm on this batch: clipping scales every gradient
FSDP2_SHARE_OF_DDP = 0.6


def run_probe(model_dir, out, distributed: str, processes: int) -> dict:
    probe = ["-m", "worker.trainer.training.probe", "--model", str(model_dir), "--out", str(out),
             "--keep-tensors", "--distributed", distributed, "--max-grad-norm", str(MAX_GRAD_NORM), "--beta", "0.04"]
    if processes > 1:
        probe = ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(processes), *probe]
    done = subprocess.run([sys.executable, *probe], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    return torch.load(out, weights_only=False)


def assert_each_close(actual: dict, expected: dict, atol: float) -> None:
    for name, tensor in expected.items():
        torch.testing.assert_close(actual[name], tensor, rtol=0, atol=atol, msg=lambda m, name=name: f"{name}: {m}")


@pytest.fixture(scope="module")
def probes(tiny_model_dir, tmp_path_factory):
    """The probe's result by strategy, each run once for the module."""
    folder, results = tmp_path_factory.mktemp("probe"), {}

    def result(distributed: str) -> dict:
        if distributed not in results:
            processes = 1 if distributed == "none" else 2
            results[distributed] = run_probe(tiny_model_dir, folder / f"{distributed}.pt", distributed, processes)
        return results[distributed]

    return result


@pytest.mark.parametrize("strategy", ["ddp", "fsdp2"])
def test_two_processes_take_the_step_one_process_takes(probes, strategy):
    one, two = probes("none"), probes(strategy)
    assert (one["strategy"], one["processes"]) == ("none", 1)
    assert (two["strategy"], two["processes"]) == (strategy, 2)
    assert two["loss"] == pytest.approx(one["loss"], rel=FIGURE_REL)
    assert two["grad_norm"] == pytest.approx(one["grad_norm"], rel=FIGURE_REL)
    assert one["grad_norm"] > MAX_GRAD_NORM  # so the gradients compared were clipped
    assert two["grads"].keys() == one["grads"].keys() == two["params"].keys() == one["params"].keys()
    grad_atol = GRAD_OF_LARGEST * max(grad.abs().max().item() for grad in one["grads"].values())
    assert_each_close(two["grads"], one["grads"], atol=grad_atol)
    assert_each_close(two["params"], one["params"], atol=PARAM_ATOL)


def test_the_step_moves_the_parameters_by_far_more_than_the_tolerance(probes, tiny_model_dir):
    from safetensors.torch import load_file

    before = load_file(tiny_model_dir / "model.safetensors")
    after = probes("none")["params"]
    moved = max((after[name] - before[name].float()).abs().max().item() for name in after)
    assert moved > 0.5 * LEARNING_RATE
    assert PARAM_ATOL <= LEARNING_RATE / 100


def test_fsdp2_holds_a_share_of_what_ddp_replicates(probes):
    one, ddp, fsdp2 = probes("none"), probes("ddp"), probes("fsdp2")
    for held in ("parameter_bytes", "gradient_bytes", "optimizer_bytes"):
        assert ddp[held] == one[held] > 0, held  # each DDP process holds all of it
        assert fsdp2[held] <= FSDP2_SHARE_OF_DDP * ddp[held], held
