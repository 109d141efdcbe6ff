"""The parts of a checkpoint written on the trainer's other machines, sent to the first one.

torch.distributed.checkpoint has each process write its own files (its optimizer shard,
`__<rank>_<n>.distcp`) into the checkpoint's folder on its own disk. Where the machines share no
disk, the first machine's folder, the one uploaded to the control plane, would lack them: each
process off the first machine lists what it wrote, the leader says which files it lacks, and
those travel over the trainer's own process group in chunks (never a whole file in memory), then
leave the machine that wrote them. On a shared disk the leader lacks none and nothing moves.
"""
import re
from pathlib import Path

import torch
import torch.distributed as dist

from worker.trainer.distributed.topology import Topology

CHUNK_BYTES = 16 * 2**20
OWN_FILE = re.compile(r"__\d+_\d+\.distcp")  # DCP's name for a process's file: __<rank>_<n>.distcp


def own_files(folder: Path, rank: int) -> list[tuple[str, int]]:
    """(path relative to `folder`, size) of the files process `rank` wrote there."""
    return sorted((str(path.relative_to(folder)), path.stat().st_size)
                  for path in folder.rglob(f"__{rank}_*.distcp") if path.is_file())


def relay_to_leader(folder: Path, topology: Topology) -> None:
    """Every process calls it after a save, in the same order: the leader ends with every file."""
    if topology.machines == 1:
        return
    group = _cpu_group()
    offered = own_files(folder, topology.rank) if topology.machine != 0 else []
    everyone: list = [None] * topology.world_size
    dist.all_gather_object(everyone, offered, group=group)
    if topology.leads:
        refuse_unlawful(everyone)
    lacking = [[name for name, _ in files if not (folder / name).is_file()] if topology.leads else []
               for files in everyone]
    dist.broadcast_object_list(lacking, src=0, group=group)
    sizes = {rank: dict(files) for rank, files in enumerate(everyone)}
    for rank, names in enumerate(lacking):
        for name in names:
            if topology.rank == rank:
                _send(folder / name, group)
            elif topology.leads:
                _receive(folder / name, sizes[rank][name], rank, group)
    for name in lacking[topology.rank]:  # now on the leader's disk: not this machine's to keep
        (folder / name).unlink()
    if lacking[topology.rank]:
        _remove_empty_folders(folder)


def refuse_unlawful(everyone: list) -> None:
    """The leader writes what another process names only where DCP would have: its own shard
    files, inside the checkpoint's folder. The group is not authenticated (docs/security.md)."""
    for rank, files in enumerate(everyone):
        for name, size in files:
            path = Path(name)
            if path.is_absolute() or ".." in path.parts or not OWN_FILE.fullmatch(path.name) \
                    or path.name.split("_")[2] != str(rank) or not isinstance(size, int) or size < 0:
                raise ValueError(f"process {rank} offered {name!r} ({size} bytes) for the checkpoint: not a "
                                 f"shard file of its own; nothing was written")


def _remove_empty_folders(folder: Path) -> None:
    """The checkpoint's folders on a machine that sent all it wrote: nothing of it stays there."""
    for inner in sorted((path for path in folder.rglob("*") if path.is_dir()), reverse=True):
        if not any(inner.iterdir()):
            inner.rmdir()
    if not any(folder.iterdir()):
        folder.rmdir()


def _send(path: Path, group) -> None:
    with path.open("rb") as source:
        while chunk := source.read(CHUNK_BYTES):
            dist.send(torch.frombuffer(bytearray(chunk), dtype=torch.uint8), dst=0, group=group)


def _receive(path: Path, size: int, rank: int, group) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".relayed")
    with partial.open("wb") as target:
        left = size
        while left:
            chunk = torch.empty(min(CHUNK_BYTES, left), dtype=torch.uint8)
            dist.recv(chunk, src=rank, group=group)
            target.write(chunk.numpy().tobytes())
            left -= chunk.numel()
    partial.rename(path)


_GLOO: dict[str, object] = {}


def _cpu_group():
    """A gloo group for CPU tensors: the default one where it is gloo, else one made once, by every
    process at its first save (new_group is itself collective)."""
    if dist.get_backend() == "gloo":
        return None
    if "group" not in _GLOO:
        _GLOO["group"] = dist.new_group(backend="gloo")
    return _GLOO["group"]
