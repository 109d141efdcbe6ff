"""Lists and dicts exchanged between the trainer's processes as JSON in byte tensors, never pickle.

torch's `*_object` collectives unpickle what the other processes send, and unpickling runs
whatever the bytes name: a process that joined the trainer's unauthenticated group (docs/
security.md) would run code on the leader. Here each value travels as UTF-8 JSON in a uint8
tensor, its length first, and is read back with `json.loads` alone; the caller checks the shape
of what it got. A length past MAX_JSON_BYTES is refused on every process alike before anything
that large is made.
"""
import json

import torch
import torch.distributed as dist

MAX_JSON_BYTES = 16 * 2**20


class PeerDataRefused(ValueError):
    """What another process sent is not JSON of a bounded length."""


def encode(value) -> torch.Tensor:
    """`value` (JSON types only) as a uint8 tensor of its JSON text."""
    raw = json.dumps(value, separators=(",", ":"), allow_nan=False).encode("utf-8")
    if len(raw) > MAX_JSON_BYTES:
        raise PeerDataRefused(f"{len(raw)} bytes of JSON to send, over the {MAX_JSON_BYTES} a process takes")
    return torch.frombuffer(bytearray(raw), dtype=torch.uint8) if raw else torch.empty(0, dtype=torch.uint8)


def decode(payload: torch.Tensor, sender: int):
    """The value process `sender` encoded: JSON, nothing else is read."""
    try:
        return json.loads(payload.numpy().tobytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise PeerDataRefused(f"process {sender} sent {payload.numel()} bytes that are not JSON; "
                              f"nothing of them was used") from None


def _checked_length(length: int, sender: int) -> int:
    if not 0 <= length <= MAX_JSON_BYTES:
        raise PeerDataRefused(f"process {sender} announced {length} bytes of JSON, over the {MAX_JSON_BYTES} "
                              f"a process takes; nothing of it was read")
    return length


def all_gather_json(value, world_size: int, group=None) -> list:
    """Every process's `value`, by rank: lengths first, then the payloads padded to the longest."""
    mine = encode(value)
    lengths = [torch.zeros(1, dtype=torch.int64) for _ in range(world_size)]
    dist.all_gather(lengths, torch.tensor([mine.numel()], dtype=torch.int64), group=group)
    sizes = [_checked_length(int(length.item()), rank) for rank, length in enumerate(lengths)]
    longest = max(sizes)
    padded = torch.zeros(longest, dtype=torch.uint8)
    padded[:mine.numel()] = mine
    payloads = [torch.empty(longest, dtype=torch.uint8) for _ in range(world_size)]
    dist.all_gather(payloads, padded, group=group)
    return [decode(payload[:size], rank) for rank, (payload, size) in enumerate(zip(payloads, sizes))]


def broadcast_json(value, src: int, rank: int, group=None):
    """`value` as process `src` has it, on every process (the others' `value` is not read)."""
    mine = encode(value) if rank == src else torch.empty(0, dtype=torch.uint8)
    length = torch.tensor([mine.numel()], dtype=torch.int64)
    dist.broadcast(length, src=src, group=group)
    size = _checked_length(int(length.item()), src)
    payload = mine if rank == src else torch.empty(size, dtype=torch.uint8)
    if size:
        dist.broadcast(payload, src=src, group=group)
    return decode(payload, src)
