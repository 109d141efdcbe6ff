"""The parts of a checkpoint written on the trainer's other machines, sent to the first one.

torch.distributed.checkpoint has each process write its own files (its optimizer shard,
`__<rank>_<n>.distcp`) into the checkpoint's folder on its own disk. Where the machines share no
disk, the first machine's folder, the one uploaded to the control plane, would lack them: each
process off the first machine lists what it wrote, the leader says which files it lacks, and
those travel over the trainer's own process group in chunks (never a whole file in memory), then
leave the machine that wrote them. On a shared disk the leader lacks none and nothing moves.
The lists travel as JSON (distributed/plain_collectives.py), checked once decoded: nothing a
process sends is unpickled, and a process sends only files it offered itself.
"""
import re
from pathlib import Path

import torch
import torch.distributed as dist

from worker.trainer.distributed.plain_collectives import all_gather_json, broadcast_json
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
    everyone = all_gather_json(offered, topology.world_size, group)
    if topology.leads:
        refuse_unlawful(everyone)
    lacking = [[name for name, _ in files if not (folder / name).is_file()] if topology.leads else []
               for files in everyone]
    lacking = broadcast_json(lacking, src=0, rank=topology.rank, group=group)
    refuse_unoffered(lacking, offered, topology)
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
    if not isinstance(everyone, list) or not all(isinstance(files, list) for files in everyone):
        raise ValueError("the processes' lists of files for the checkpoint are not lists; nothing was written")
    for rank, files in enumerate(everyone):
        for entry in files:
            if not (isinstance(entry, (list, tuple)) and len(entry) == 2 and isinstance(entry[0], str)):
                raise ValueError(f"process {rank} offered {entry!r:.200} for the checkpoint: not a (file, size) "
                                 f"pair; nothing was written")
            name, size = entry
            path = Path(name)
            if path.is_absolute() or ".." in path.parts or not OWN_FILE.fullmatch(path.name) \
                    or path.name.split("_")[2] != str(rank) or not isinstance(size, int) or size < 0:
                raise ValueError(f"process {rank} offered {name!r} ({size} bytes) for the checkpoint: not a "
                                 f"shard file of its own; nothing was written")


def refuse_unoffered(lacking: list, offered: list, topology: Topology) -> None:
    """A process sends the leader only files it offered: a leader that asks for any other file
    of the machine (the group is not authenticated) gets nothing."""
    mine = lacking[topology.rank] if isinstance(lacking, list) and len(lacking) == topology.world_size else None
    if not isinstance(mine, list) or not set(map(_hashable, mine)) <= {name for name, _ in offered}:
        raise ValueError(f"process {topology.rank} was asked for files it did not offer for the checkpoint "
                         f"({mine!r:.200}); nothing was sent")


def _hashable(value):
    return value if isinstance(value, str) else repr(value)


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
