"""Which precision computes fastest on this machine, for training and for the served model.

bfloat16 halves the bytes moved, but it is only faster where the hardware multiplies in
it: GPUs with bf16 support and CPUs with AMX tiles. A CPU with AVX-512 BF16 alone (the
instructions PyTorch's `_is_mkldnn_bf16_supported` looks for) is slower in bf16 than in
fp32. Measured on a 2-core Xeon without AMX: a 2048x2048 matmul 156 GFLOP/s in bf16
against 275 in fp32; one SmolLM2-135M micro-batch (2 x 280 tokens) forward and backward
4.4 s under bf16 autocast against 2.8 s in fp32; vLLM 210 against 260 tokens/s.
"""


def bf16_is_fast() -> bool:
    import torch

    if torch.cuda.is_available():
        return torch.cuda.is_bf16_supported()
    return bool(torch.cpu._is_amx_tile_supported())


def served_dtype(device: str) -> str:
    """What vLLM serves the policy in on `device` ("cpu" or "cuda"), and so what weight sync writes."""
    if device == "cuda":
        return "bfloat16"
    return "bfloat16" if bf16_is_fast() else "float32"


def local_serving_device() -> str:
    """Where a server started on this machine computes: its GPU if it has one."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"
