"""What a checkpoint exports as, and the tar stream that carries it.

`part` picks the files a user wants: `all` (to resume from), `model` (ready to serve: weights,
tokenizer and config without the optimizer state; for LoRA, the merged model that a run's last
checkpoint holds) or `adapter` (a LoRA adapter with its tokenizer). The tar is produced while
it is sent, so a checkpoint of hundreds of MB costs no memory or temporary disk.
"""
import tarfile
from pathlib import PurePosixPath

from runs.artifacts.checkpoint_files import CheckpointFile

PARTS = ("all", "model", "adapter")
TRAINER_STATE, OPTIMIZER, MERGED = "trainer_state.pt", "optimizer", "merged"
TRAINING_STATE = (TRAINER_STATE, OPTIMIZER)  # what resuming needs and serving does not
ADAPTER_WEIGHTS = "adapter_model.safetensors"
CHUNK = 1024 * 1024
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


def tar_stream(exported: Exported, name: str):
    """Yields an uncompressed tar of the files under a folder called `name`, a chunk at a time."""
    for path, stored in exported:
        info = tarfile.TarInfo(f"{name}/{path.as_posix()}")
        info.size, info.mtime, info.mode = stored.size, int(stored.mtime), 0o644
        yield info.tobuf(format=tarfile.PAX_FORMAT)
        yield from _file_chunks(stored)
    yield b"\0" * (2 * BLOCK)  # end of archive


def tar_member(name: str, content: bytes) -> bytes:
    """One small file as a tar member, to go before a tar_stream."""
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(content), 0o644
    return info.tobuf(format=tarfile.PAX_FORMAT) + content + b"\0" * (-len(content) % BLOCK)


def _file_chunks(stored: CheckpointFile):
    sent = 0
    with stored.open() as handle:
        while sent < stored.size and (chunk := handle.read(min(CHUNK, stored.size - sent))):
            sent += len(chunk)
            yield chunk
    if sent < stored.size:  # the file shrank while being sent: pad so the archive stays readable
        yield b"\0" * (stored.size - sent)
    if stored.size % BLOCK:
        yield b"\0" * (BLOCK - stored.size % BLOCK)
