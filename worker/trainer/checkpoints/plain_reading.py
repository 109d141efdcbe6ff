"""Reading a checkpoint's files without running anything they name: tensors and plain values only.

A checkpoint comes from whoever held the run's token (its worker, anyone reading the broker, any
member of its Ray cluster), and unpickling runs whatever the bytes name. So the trainer state is
read with `torch.load(weights_only=True)`, and the optimizer's folder, which
torch.distributed.checkpoint writes with plain pickle (its index, `.metadata`) and torch.save
(its non-tensor values), through a reader whose unpickler builds only DCP's own index classes,
torch's dtypes, layouts and sizes and paths, and a planner that loads values weights_only. A
file that names anything else is refused, naming the file, before any of it is used.
"""
import io
import pickle
from pathlib import Path, PosixPath, PurePosixPath
from typing import Any

import torch
from torch.distributed.checkpoint import FileSystemReader
from torch.distributed.checkpoint import filesystem as dcp_filesystem
from torch.distributed.checkpoint import metadata as dcp_metadata
from torch.distributed.checkpoint.default_planner import DefaultLoadPlanner
from torch.distributed.checkpoint._traverse import set_element

METADATA_FILE = ".metadata"


class CheckpointFileRefused(ValueError):
    """A checkpoint's file holds more than tensors and plain values: nothing of it was used."""


def _index_classes() -> dict[tuple[str, str], object]:
    """What DCP's `.metadata` pickle may name: its dataclasses, torch's dtypes, layout lookup,
    Size, and paths (the checkpoint's id). None of them runs anything given any arguments."""
    allowed: list[Any] = [dcp_metadata.Metadata, dcp_metadata.TensorStorageMetadata, dcp_metadata.BytesStorageMetadata,
               dcp_metadata.ChunkStorageMetadata, dcp_metadata.TensorProperties, dcp_metadata.MetadataIndex,
               dcp_metadata.StorageMeta, dcp_metadata._MEM_FORMAT_ENCODING, dcp_filesystem._StorageInfo,
               torch.Size, torch.serialization._get_layout, PosixPath, PurePosixPath]
    found = {(item.__module__, item.__qualname__): item for item in allowed}
    found |= {("torch", name): value for name, value in vars(torch).items() if isinstance(value, torch.dtype)}
    return found


class _IndexUnpickler(pickle.Unpickler):
    ALLOWED = _index_classes()

    def find_class(self, module: str, name: str):
        try:
            return self.ALLOWED[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(f"it names {module}.{name}, which is not part of a checkpoint's "
                                         f"index") from None


def read_index(path: Path) -> dcp_metadata.Metadata:
    """DCP's index of a saved state, built from the allowed classes alone."""
    try:
        with Path(path).open("rb") as source:
            index = _IndexUnpickler(source).load()
    except (pickle.UnpicklingError, EOFError, AttributeError, TypeError, ValueError, IndexError) as exc:
        raise refused(path, exc) from None
    if not isinstance(index, dcp_metadata.Metadata):
        raise refused(path, f"it holds a {type(index).__name__}, not an index")
    return index


def refused(path: Path, why) -> CheckpointFileRefused:
    return CheckpointFileRefused(f"{path} is not read: it may hold only tensors and plain values, and {why}. "
                                 f"Nothing of the checkpoint was used: the trainer never writes such a file, so "
                                 f"it was made or changed by someone else")


class PlainFileSystemReader(FileSystemReader):
    """DCP's file reader, its index read by `read_index` instead of plain pickle."""

    def read_metadata(self, *args, **kwargs) -> dcp_metadata.Metadata:
        rank = kwargs.get("rank")
        index = read_index(Path(self._get_metadata_path(rank)))
        storage_meta = getattr(index, "storage_meta", None) or dcp_metadata.StorageMeta()
        storage_meta.load_id = self.load_id
        index.storage_meta = storage_meta
        return index


class PlainLoadPlanner(DefaultLoadPlanner):
    """DCP's load planner, its non-tensor values read weights_only."""

    def __init__(self, folder: Path):
        super().__init__()
        self.folder = Path(folder)

    def load_bytes(self, read_item, value: io.BytesIO) -> None:
        try:
            loaded = torch.load(value, weights_only=True)
        except pickle.UnpicklingError as exc:
            raise refused(self.folder, f"its value {read_item.dest_index.fqn} is not: {_why(exc)}") from None
        # Placed as DefaultLoadPlanner.load_bytes places it (which reads it weights_only=False).
        if self.flatten_state_dict:
            set_element(self.original_state_dict, self.mappings[read_item.dest_index.fqn], loaded)
        else:
            self.state_dict[read_item.dest_index.fqn] = loaded


def load_saved_state(state: dict, folder: Path) -> None:
    """dcp.load of `folder` into `state`, reading only tensors and plain values. A refusal is
    raised as itself: DCP wraps what its reader raises in its own exception, or in words."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.api import CheckpointException

    read_index(Path(folder) / METADATA_FILE)  # every process, before DCP would read it and wrap the refusal
    try:
        dcp.load(state, storage_reader=PlainFileSystemReader(folder), planner=PlainLoadPlanner(folder))
    except CheckpointException as exc:
        for failure, _ in exc.failures.values():
            if isinstance(failure, CheckpointFileRefused):
                raise failure from None
        raise


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _why(exc: Exception) -> str:
    """The reason in torch's refusal (the line after its advice on loading anyway, which we never do)."""
    text = str(exc)
    marker = "WeightsUnpickler error:"
    if marker not in text:
        return _first_line(exc)
    return text.split(marker, 1)[1].split(" Please use", 1)[0].strip().splitlines()[0].rstrip(".")


def _numpy_arrays() -> list:
    """What a numpy array needs to be read, for the numpy RNG state of checkpoints written before
    it was kept as a tensor: the array and dtype types and the array's constructor (it makes an
    empty array of a shape and dtype; its items are read under the same restrictions)."""
    import numpy as np

    reconstruct = np._core.multiarray._reconstruct  # type: ignore[attr-defined]
    return [np.ndarray, np.dtype, np.dtypes.UInt32DType, reconstruct,
            (reconstruct, "numpy.core.multiarray._reconstruct")]  # written under numpy 1


def load_state(path: Path) -> dict:
    """A torch.save'd dict of tensors and plain values, read weights_only; anything else refused."""
    try:
        with torch.serialization.safe_globals(_numpy_arrays()):
            loaded = torch.load(path, weights_only=True, map_location="cpu")
    except pickle.UnpicklingError as exc:
        raise refused(path, f"it holds something else: {_why(exc)}") from None
    except (RuntimeError, EOFError) as exc:
        raise CheckpointFileRefused(f"{path} is not a state the trainer wrote: {_first_line(exc)}") from None
    if not isinstance(loaded, dict):
        raise refused(path, f"it holds a {type(loaded).__name__}, not a dict")
    return loaded
