"""What a worker says it runs on: GPUs from torch, else nvidia-smi (narrowed to
CUDA_VISIBLE_DEVICES), else none; always its CPU cores and RAM; probed in a child process."""
import json
import os
import stat

import pytest

from worker import devices
from worker.devices import Devices, Gpu

NVIDIA_SMI = """#!/bin/sh
# A stand-in for nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv,noheader,nounits
echo "0, GPU-aaaa-1111, NVIDIA H100 80GB HBM3, 81559"
echo "1, GPU-bbbb-2222, NVIDIA H100 80GB HBM3, 81559"
echo "2, GPU-cccc-3333, NVIDIA A10G, 23028"
"""


@pytest.fixture
def fake_nvidia_smi(tmp_path, monkeypatch):
    """A real executable named nvidia-smi first on PATH, printing three GPUs."""
    script = tmp_path / "nvidia-smi"
    script.write_text(NVIDIA_SMI)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    return script


def test_nvidia_smi_lists_every_gpu_with_its_memory(fake_nvidia_smi):
    assert devices.gpus_from_nvidia_smi() == (Gpu(0, "NVIDIA H100 80GB HBM3", 81559),
                                              Gpu(1, "NVIDIA H100 80GB HBM3", 81559), Gpu(2, "NVIDIA A10G", 23028))


@pytest.mark.parametrize("visible, names", [
    ("2", ["NVIDIA A10G"]),
    ("GPU-bbbb,0", ["NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"]),
    ("", []),
])
def test_nvidia_smi_is_narrowed_to_the_visible_gpus_renumbered_as_cuda_does(fake_nvidia_smi, monkeypatch,
                                                                              visible, names):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    found = devices.gpus_from_nvidia_smi()
    assert [gpu.name for gpu in found] == names
    assert [gpu.index for gpu in found] == list(range(len(names)))


def test_no_nvidia_smi_means_no_answer_from_it(monkeypatch):
    monkeypatch.setattr(devices.shutil, "which", lambda name: None)
    assert devices.gpus_from_nvidia_smi() is None


def test_a_failing_nvidia_smi_means_no_answer_from_it(tmp_path, monkeypatch):
    script = tmp_path / "nvidia-smi"
    script.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed: no driver' >&2\nexit 9\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert devices.gpus_from_nvidia_smi() is None


def test_torch_is_asked_first_then_nvidia_smi(fake_nvidia_smi, monkeypatch):
    monkeypatch.setattr(devices, "gpus_from_torch", lambda: (Gpu(0, "from torch", 1024),))
    assert devices.probe().source == "torch"
    monkeypatch.setattr(devices, "gpus_from_torch", lambda: None)
    found = devices.probe()
    assert found.source == "nvidia-smi" and found.kind == "gpu" and len(found.gpus) == 3


def test_without_gpus_a_worker_reports_its_cpu_cores_and_ram(monkeypatch):
    monkeypatch.setattr(devices, "gpus_from_torch", lambda: None)
    monkeypatch.setattr(devices, "gpus_from_nvidia_smi", lambda: None)
    found = devices.probe()
    assert found == Devices(gpus=(), cpu_cores=len(os.sched_getaffinity(0)), memory_mib=found.memory_mib,
                            source="none")
    assert found.kind == "cpu" and found.memory_mib > 0


def test_the_json_form_round_trips():
    found = Devices(gpus=(Gpu(0, "NVIDIA H100 80GB HBM3", 81559),), cpu_cores=32, memory_mib=515000, source="torch")
    assert Devices.from_dict(json.loads(json.dumps(found.to_dict()))) == found
    assert found.to_dict()["kind"] == "gpu"


def test_the_probe_runs_in_a_child_and_reports_this_machine():
    """On this machine: whatever torch or nvidia-smi find, and the cores this process may use."""
    found = devices.probe_in_child()
    assert found.cpu_cores == len(os.sched_getaffinity(0))
    assert found.source in ("torch", "nvidia-smi", "none")


def test_a_child_that_fails_falls_back_to_nvidia_smi_here(monkeypatch, fake_nvidia_smi):
    monkeypatch.setattr(devices.sys, "executable", "/nonexistent/python")
    found = devices.probe_in_child()
    assert found.source == "nvidia-smi" and len(found.gpus) == 3
