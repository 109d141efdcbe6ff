"""scripts/gpu_check.py, the prepared check for a lent GPU: run here on the CPU, every row passes;
a check that fails or raises makes a FAILED row and exit status 1."""
import subprocess
import sys
from pathlib import Path

import pytest

from scripts import gpu_check
from scripts.gpu_check import Result

ROOT = Path(__file__).resolve().parents[2]
CPU_ROWS = ("training step, full", "training step, LoRA", "log-probs fp32, packed", "log-probs fp32, one per row",
            "checkpoint round trip", "reward model")


def test_every_check_passes_on_the_cpu_and_the_report_is_written(tmp_path):
    done = subprocess.run([sys.executable, "-m", "scripts.gpu_check", "--device", "cpu", "--out", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    rows = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in done.stdout.splitlines()
            if line.startswith("| ") and not line.startswith("| check ")}
    assert rows == {name: "ok" for name in CPU_ROWS}
    assert "bf16" in done.stdout and "device: " in done.stdout  # the device's facts head the table
    assert (tmp_path / "gpu_check.md").read_text().strip() == done.stdout.strip()


def test_a_check_that_raises_is_a_failed_row_naming_the_error():
    def broken():
        raise ValueError("no layer named q_proj\nsecond line")

    result = gpu_check.timed("training step, LoRA", broken)
    assert (result.name, result.ok, result.figure) == ("training step, LoRA", False,
                                                       "ValueError: no layer named q_proj")


def test_a_failed_row_makes_exit_status_1(tmp_path, monkeypatch):
    monkeypatch.setenv("MODEL_DIRS", "")  # main adds its folder; restored after the test
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.setattr(gpu_check, "run_checks", lambda device, bf16, work: (
        ["device: none"], [Result("reward model", True, "fine"), Result("checkpoint round trip", False, "step 0")]))
    assert gpu_check.main(["--device", "cpu", "--out", str(tmp_path)]) == 1
    assert "| checkpoint round trip | FAILED | step 0" in (tmp_path / "gpu_check.md").read_text()


@pytest.mark.parametrize("change", [
    lambda state: state["exp_avg"].add_(1e-6),
    lambda state: state.pop("exp_avg_sq"),
    lambda state: state.update(step=state["step"] + 1),
])
def test_a_state_differing_anywhere_in_it_is_counted(change):
    import torch

    saved = {"state": {0: {"step": torch.tensor(1.0), "exp_avg": torch.zeros(3), "exp_avg_sq": torch.ones(3)}},
             "param_groups": [{"lr": 1e-3, "params": [0]}]}
    loaded = {"state": {0: {name: value.clone() for name, value in saved["state"][0].items()}},
              "param_groups": [{"lr": 1e-3, "params": [0]}]}
    assert gpu_check.tensors_differing(saved, loaded) == 0
    change(loaded["state"][0])
    assert gpu_check.tensors_differing(saved, loaded) == 1


def test_cuda_asked_for_where_there_is_none_is_refused_saying_so(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit, match="--device cuda: torch sees no CUDA device"):
        gpu_check.main(["--device", "cuda"])
