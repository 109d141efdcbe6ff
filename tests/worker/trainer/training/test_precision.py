"""bf16 is chosen where the hardware computes it faster than fp32, not merely where it can."""
import pytest
import torch

from worker.trainer.training import precision
from worker.trainer.training.setup import use_bf16


@pytest.fixture
def cpu(monkeypatch):
    """A CPU-only machine whose AMX, bf16 instructions and matmul times a test sets."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.delenv(precision.ANSWER_VARIABLE, raising=False)
    timed = []

    def machine(amx=False, bf16_instructions=True, seconds=None):
        monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx)
        monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: bf16_instructions)

        def matmul_seconds(dtype):
            timed.append(dtype)
            return seconds[dtype]
        monkeypatch.setattr(precision, "matmul_seconds", matmul_seconds)
        precision.bf16_is_fast.cache_clear()
        timed.clear()
        return timed
    yield machine
    precision.bf16_is_fast.cache_clear()


def test_a_cpu_with_amx_trains_and_serves_in_bf16_without_timing(cpu):
    timed = cpu(amx=True)
    assert precision.bf16_is_fast() and use_bf16("auto")
    assert precision.served_dtype("cpu") == "bfloat16"
    assert timed == []


def test_a_cpu_whose_bf16_matmul_is_slower_trains_and_serves_in_fp32(cpu):
    cpu(seconds={torch.bfloat16: 0.011, torch.float32: 0.006})  # a Xeon with AVX-512 BF16 only
    assert not precision.bf16_is_fast() and not use_bf16("auto")
    assert precision.served_dtype("cpu") == "float32"
    assert precision.local_serving_device() == "cpu"


def test_a_cpu_whose_bf16_matmul_is_faster_trains_and_serves_in_bf16(cpu):
    cpu(seconds={torch.bfloat16: 0.005, torch.float32: 0.011})  # AMD Zen 4
    assert precision.bf16_is_fast() and use_bf16("auto")
    assert precision.served_dtype("cpu") == "bfloat16"


def test_a_bf16_matmul_only_slightly_faster_is_not_worth_it(cpu):
    cpu(seconds={torch.bfloat16: 0.0095, torch.float32: 0.010})
    assert not precision.bf16_is_fast()


def test_without_bf16_instructions_nothing_is_timed(cpu):
    timed = cpu(bf16_instructions=False)
    assert not precision.bf16_is_fast()
    assert timed == []


def test_the_timing_runs_once_per_process_alternating_the_dtypes(cpu):
    timed = cpu(seconds={torch.bfloat16: 0.005, torch.float32: 0.011})
    precision.bf16_is_fast(), precision.bf16_is_fast(), precision.served_dtype("cpu")
    assert timed == [torch.bfloat16, torch.float32] * 3


@pytest.mark.parametrize("given, fast", [("1", True), ("0", False)])
def test_an_answer_given_in_the_environment_is_taken_without_timing(cpu, monkeypatch, given, fast):
    timed = cpu(amx=not fast, seconds={torch.bfloat16: 0.005, torch.float32: 0.011})
    monkeypatch.setenv(precision.ANSWER_VARIABLE, given)
    assert precision.bf16_is_fast() is fast
    assert timed == []


def test_a_child_given_this_processes_answer_takes_it_whatever_it_would_time(cpu, monkeypatch):
    cpu(seconds={torch.bfloat16: 0.005, torch.float32: 0.011})
    given = precision.answer_for_children()
    assert given == {precision.ANSWER_VARIABLE: "1"}
    timed = cpu(seconds={torch.bfloat16: 0.011, torch.float32: 0.005})  # the child, timing while vLLM loads
    monkeypatch.setenv(precision.ANSWER_VARIABLE, given[precision.ANSWER_VARIABLE])
    assert precision.served_dtype("cpu") == "bfloat16" and timed == []


def test_a_matmul_is_timed_in_the_dtype_asked():
    assert 0 < precision.matmul_seconds(torch.float32, repeats=1) < 10


def test_the_setting_overrides_the_hardware_rule(cpu):
    cpu(amx=False, bf16_instructions=False)
    assert use_bf16("on")
    cpu(amx=True)
    assert not use_bf16("off")


def test_gpus_serve_in_bf16():
    assert precision.served_dtype("cuda") == "bfloat16"
