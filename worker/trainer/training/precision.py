"""Which precision computes fastest on this machine, for training and for the served model.

bf16 is faster only where the hardware multiplies in it, which the instruction set does not
tell (some CPUs with AVX-512 BF16 are slower in it than in fp32), so on a CPU without AMX the
two are timed once per process on a layer-sized matmul (figures: bench/LOG.md).
GRPO_BF16_IS_FAST ("1" or "0") gives the answer without timing: the supervisor passes its own
to the trainer it starts, so both write and serve weights in the same dtype.
"""
import functools
import os
import time

ANSWER_VARIABLE = "GRPO_BF16_IS_FAST"

# bf16 must beat fp32 by this much to be chosen: the two are far apart where it matters
# (0.44 and 1.8 on the CPUs above), so timing noise cannot flip the choice.
_FASTER_BY = 0.8
_LAYER_SHAPE = (1024, 576, 1536)  # tokens x hidden x MLP width of SmolLM2-135M


@functools.cache
def bf16_is_fast() -> bool:
    given = os.environ.get(ANSWER_VARIABLE, "").strip()
    if given in ("0", "1"):
        return given == "1"
    import torch

    if torch.cuda.is_available():
        return torch.cuda.is_bf16_supported()
    if torch.cpu._is_amx_tile_supported():
        return True
    if not torch.ops.mkldnn._is_mkldnn_bf16_supported():
        return False  # bf16 would be emulated
    # Alternated and the best of each kept, so that a burst of other work on the machine
    # (a vLLM server loading) does not land on one dtype only.
    bf16 = fp32 = float("inf")
    for _ in range(3):
        bf16, fp32 = min(bf16, matmul_seconds(torch.bfloat16)), min(fp32, matmul_seconds(torch.float32))
    return bf16 < _FASTER_BY * fp32


def answer_for_children() -> dict[str, str]:
    """Environment that makes a child process take this process's answer."""
    return {ANSWER_VARIABLE: "1" if bf16_is_fast() else "0"}


def matmul_seconds(dtype, repeats: int = 3) -> float:
    """Best time of one layer-sized matmul in `dtype` on the CPU."""
    import torch

    tokens, hidden, width = _LAYER_SHAPE
    x, w = torch.randn(tokens, hidden, dtype=dtype), torch.randn(width, hidden, dtype=dtype)
    torch.nn.functional.linear(x, w)  # the first call picks and prepares a kernel
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        torch.nn.functional.linear(x, w)
        best = min(best, time.perf_counter() - started)
    return best


def served_dtype(device: str) -> str:
    """What vLLM serves the policy in on `device` ("cpu" or "cuda"), and so what weight sync writes."""
    if device == "cuda":
        return "bfloat16"
    return "bfloat16" if bf16_is_fast() else "float32"


def local_serving_device() -> str:
    """Where a server started on this machine computes: its GPU if it has one."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"
