"""What a checkpoint exports as, and the tar stream that carries it.

`part` picks the files a user wants: `all` (to resume from), `model` (ready to serve: weights,
tokenizer and config without the optimizer state; for LoRA, the merged model that a run's last
checkpoint holds) or `adapter` (a LoRA adapter with its tokenizer). The tar is produced while
it is sent, so a checkpoint of any size costs no memory or temporary disk. Its layout is fixed by
the files' names and sizes alone (each header and padding is computed, no data read), so its
length is known in advance and a download can start at any byte of it (pieces.py: HTTP Range).
"""
import tarfile
from collections.abc import Sequence
from pathlib import PurePosixPath

from runs.artifacts.checkpoint_files import CheckpointFile
from runs.artifacts.pieces import Piece, iter_bytes, literal, of_file, total_size

PARTS = ("all", "model", "adapter")
TRAINER_STATE, OPTIMIZER, MERGED = "trainer_state.pt", "optimizer", "merged"
TRAINING_STATE = (TRAINER_STATE, OPTIMIZER)  # what resuming needs and serving does not
ADAPTER_WEIGHTS = "adapter_model.safetensors"
BLOCK = tarfile.BLOCKSIZE

Exported = list[tuple[PurePosixPath, CheckpointFile]]  # (path in the export, the stored file)


class NoSuchPart(Exception):
    """The checkpoint has no such part; the message says which one to take instead."""


def export_files(files: list[CheckpointFile], part: str) -> Exported:
    """The files of `part`, at their paths in the export. NoSuchPart when the checkpoint lacks it."""
    is_lora = any(file.path == PurePosixPath(ADAPTER_WEIGHTS) for file in files)
    if part == "all":
        return [(file.path, file) for file in files]
    if part == "adapter":
        if not is_lora:
            raise NoSuchPart("this checkpoint holds a whole model, not a LoRA adapter: take part=model")
        return [(file.path, file) for file in files if file.path.parts[0] not in (*TRAINING_STATE, MERGED)]
    if not is_lora:
        return [(file.path, file) for file in files if file.path.parts[0] not in TRAINING_STATE]
    merged = [(file.path.relative_to(MERGED), file) for file in files if file.path.parts[0] == MERGED]
    if not merged:
        raise NoSuchPart("this LoRA checkpoint holds the adapter alone (the run's last checkpoint also holds "
                         "the merged model): take part=adapter, or the last checkpoint")
    return merged


def tar_pieces(exported: Exported, name: str, before: Sequence[bytes] = ()) -> list[Piece]:
    """An uncompressed tar of the files under a folder called `name`, after the members `before`
    (tar_member), as pieces: headers and padding computed, the files' bytes read when sent."""
    pieces = [literal(member) for member in before]
    for path, stored in exported:
        info = tarfile.TarInfo(f"{name}/{path.as_posix()}")
        info.size, info.mtime, info.mode = stored.size, int(stored.mtime), 0o644
        pieces += [literal(info.tobuf(format=tarfile.PAX_FORMAT)), of_file(stored)]
        if stored.size % BLOCK:
            pieces.append(literal(b"\0" * (BLOCK - stored.size % BLOCK)))
    return [*pieces, literal(b"\0" * (2 * BLOCK))]  # end of archive


def tar_stream(exported: Exported, name: str):
    """Yields the tar of tar_pieces, a chunk at a time, from its first byte to its last."""
    pieces = tar_pieces(exported, name)
    yield from iter_bytes(pieces, 0, total_size(pieces) - 1)


def tar_member(name: str, content: bytes) -> bytes:
    """One small file as a tar member, to go before the checkpoint's folder."""
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(content), 0o644
    return info.tobuf(format=tarfile.PAX_FORMAT) + content + b"\0" * (-len(content) % BLOCK)
