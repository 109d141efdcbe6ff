"""A checkpoint's files, wherever they are kept, in one shape.

A checkpoint folder on this disk, one in the control plane's filesystem store and one in an S3
bucket all list as `CheckpointFile`s, so the tar stream, the export parts and the Hub push are
written once for all of them.
"""
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO


@dataclass(frozen=True)
class CheckpointFile:
    path: PurePosixPath  # inside the checkpoint folder
    size: int
    mtime: float
    open: Callable[[], BinaryIO]  # a readable stream of the file's bytes, closed by the caller


def folder_files(folder: Path) -> list[CheckpointFile]:
    """The regular files under `folder`, sorted; links are left out, as they could point outside it."""
    files = []
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        stat = path.stat()
        files.append(CheckpointFile(PurePosixPath(path.relative_to(folder).as_posix()), stat.st_size,
                                    stat.st_mtime, _opener(path)))
    return files


def _opener(path: Path) -> Callable[[], BinaryIO]:
    return lambda: path.open("rb")


def copy_to_folder(files: list[tuple[PurePosixPath, CheckpointFile]], folder: Path, chunk: int = 1024 * 1024) -> None:
    """Writes each file at its path under `folder` (for tools that want a folder, such as the Hub push)."""
    for path, stored in files:
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        with stored.open() as source, target.open("wb") as out:
            while block := source.read(chunk):
                out.write(block)
