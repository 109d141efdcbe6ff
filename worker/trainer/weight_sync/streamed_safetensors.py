"""Writing a safetensors file one tensor at a time, each cast to the server's dtype on the way.

`safetensors.torch.save_file` takes every tensor at once and serializes them into one buffer
before writing: for a weight sync that meant a whole bf16 copy of the model plus that buffer
(2 x 270 MB for SmolLM2-135M) in the trainer at every sync. The format is small and documented
(https://github.com/huggingface/safetensors#format): an 8-byte little-endian header length,
a JSON header giving each tensor's dtype, shape and byte range, then the bytes. Written here
tensor by tensor, the most held at once is one tensor in bf16. The files are read back with
the safetensors library in the tests and by vLLM.
"""
import json
import struct

import torch

DTYPE_NAMES = {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
               torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8",
               torch.bool: "BOOL"}


def write_safetensors(path, tensors: dict[str, torch.Tensor], float_dtype: torch.dtype,
                      metadata: dict[str, str] | None = None) -> None:
    """Writes `tensors` to `path`, floating-point ones as `float_dtype`."""
    header, offset = {}, 0
    for name, tensor in tensors.items():
        dtype = _stored_dtype(tensor, float_dtype)
        size = tensor.numel() * dtype.itemsize
        header[name] = {"dtype": DTYPE_NAMES[dtype], "shape": list(tensor.shape), "data_offsets": [offset, offset + size]}
        offset += size
    if metadata:
        header["__metadata__"] = metadata
    encoded = json.dumps(header, separators=(",", ":")).encode()
    encoded += b" " * (-len(encoded) % 8)  # the data starts 8-byte aligned, as the reference writer does
    with open(path, "wb") as file:
        file.write(struct.pack("<Q", len(encoded)))
        file.write(encoded)
        for tensor in tensors.values():
            stored = tensor.detach().to(_stored_dtype(tensor, float_dtype)).contiguous().reshape(-1)
            file.write(stored.view(torch.uint8).numpy().data)


def _stored_dtype(tensor: torch.Tensor, float_dtype: torch.dtype) -> torch.dtype:
    return float_dtype if tensor.is_floating_point() else tensor.dtype
