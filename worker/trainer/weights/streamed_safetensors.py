"""Writing a safetensors file one tensor at a time, each cast to the server's dtype on the way,
and rewriting the same file in place at the next weight sync.

`safetensors.torch.save_file` builds the whole file in memory first: a copy of the model at
every sync. A policy's tensors keep their names and shapes, so the header and each tensor's
place stay the same and each sync rewrites them through one tensor-sized buffer (the format:
https://github.com/huggingface/safetensors#format). `python -m bench.weight_sync` times syncs.
"""
import json
import os
import struct
from dataclasses import dataclass

import torch

from worker.trainer.distributed.sharding import full_tensor

DTYPE_NAMES = {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
               torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8",
               torch.bool: "BOOL"}


@dataclass(frozen=True)
class Placement:
    dtype: torch.dtype   # as stored
    offset: int          # of its first byte, from the start of the file


@dataclass(frozen=True)
class Layout:
    header: bytes        # the length prefix and the JSON header
    placements: tuple[Placement, ...]
    size: int            # of the whole file


def layout_of(tensors: dict[str, torch.Tensor], float_dtype: torch.dtype, metadata: dict[str, str] | None) -> Layout:
    entries: dict[str, object] = {}  # the safetensors header: each tensor's entry, and __metadata__
    placements, offset = [], 0
    for name, tensor in tensors.items():
        dtype = _stored_dtype(tensor, float_dtype)
        size = tensor.numel() * dtype.itemsize
        entries[name] = {"dtype": DTYPE_NAMES[dtype], "shape": list(tensor.shape),
                         "data_offsets": [offset, offset + size]}
        placements.append((dtype, offset))
        offset += size
    if metadata:
        entries["__metadata__"] = metadata
    encoded = json.dumps(entries, separators=(",", ":")).encode()
    encoded += b" " * (-len(encoded) % 8)  # the data starts 8-byte aligned, as the reference writer does
    header = struct.pack("<Q", len(encoded)) + encoded
    return Layout(header, tuple(Placement(dtype, len(header) + start) for dtype, start in placements),
                  len(header) + offset)


class SafetensorsRewriter:
    """One safetensors file at `path`, written by `write` and rewritten in place by the next."""

    def __init__(self, path, float_dtype: torch.dtype, metadata: dict[str, str] | None = None):
        self.path, self.float_dtype, self.metadata = path, float_dtype, metadata
        self._layout: Layout | None = None
        self._buffers: dict[torch.dtype, torch.Tensor] = {}

    def write(self, tensors: dict[str, torch.Tensor]) -> None:
        """Writes `tensors`, floating-point ones as `float_dtype`; a sharded one is gathered whole as
        its turn comes (weights/gathered.py)."""
        layout = layout_of(tensors, self.float_dtype, self.metadata)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if layout != self._layout or os.fstat(fd).st_size != layout.size:
                os.ftruncate(fd, 0)  # a new file, or other tensors than last time: lay it out anew
                _write_all(fd, layout.header, 0)
                os.ftruncate(fd, layout.size)
                self._layout = layout
            for place, tensor in zip(layout.placements, tensors.values()):
                _write_all(fd, self._bytes_of(full_tensor(tensor), place.dtype), place.offset)
        finally:
            os.close(fd)

    def _bytes_of(self, tensor: torch.Tensor, dtype: torch.dtype) -> memoryview:
        """`tensor`'s values in `dtype`, in logical order, in a buffer reused from tensor to tensor."""
        tensor = tensor.detach().cpu()
        if tensor.dtype == dtype and tensor.is_contiguous():
            stored = tensor.reshape(-1)
        else:
            buffer = self._buffers.get(dtype)
            if buffer is None or buffer.numel() < tensor.numel():
                buffer = self._buffers[dtype] = torch.empty(tensor.numel(), dtype=dtype)
            stored = buffer[:tensor.numel()]
            stored.view(tensor.shape).copy_(tensor)
        # numpy arrays are buffers; numpy's stubs do not say so to the type checker.
        return memoryview(stored.view(torch.uint8).numpy()).cast("B")  # type: ignore[arg-type]


def _write_all(fd: int, data, offset: int) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)  # a single call may write less (over 2 GiB on Linux)
        view, offset = view[written:], offset + written


def _stored_dtype(tensor: torch.Tensor, float_dtype: torch.dtype) -> torch.dtype:
    return float_dtype if tensor.is_floating_point() else tensor.dtype
