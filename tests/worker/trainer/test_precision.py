"""bf16 is chosen where the hardware computes it faster than fp32, not merely where it can."""
import pytest
import torch

from worker.trainer import precision
from worker.trainer.setup import use_bf16


@pytest.fixture
def cpu_only(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)

    def with_amx(present: bool):
        monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: present)
    return with_amx


def test_a_cpu_with_amx_trains_and_serves_in_bf16(cpu_only):
    cpu_only(True)
    assert precision.bf16_is_fast() and use_bf16("auto")
    assert precision.served_dtype("cpu") == "bfloat16"


def test_a_cpu_without_amx_trains_and_serves_in_fp32(cpu_only):
    cpu_only(False)  # AVX-512 BF16 alone: slower than fp32
    assert not precision.bf16_is_fast() and not use_bf16("auto")
    assert precision.served_dtype("cpu") == "float32"
    assert precision.local_serving_device() == "cpu"


def test_the_setting_overrides_the_hardware_rule(cpu_only):
    cpu_only(False)
    assert use_bf16("on")
    cpu_only(True)
    assert not use_bf16("off")


def test_gpus_serve_in_bf16():
    assert precision.served_dtype("cuda") == "bfloat16"
