"""A download laid out as pieces whose sizes are known before any byte is read, read from any offset.

A tar made on the fly (export.py) is literal bytes (headers, padding) between stored files; a
dataset is one file. Knowing every piece's size gives the whole length (Content-Length) and lets
a download start at any byte (HTTP Range): the pieces before it are skipped by arithmetic, the
file it falls in is opened there (a seek on disk, a ranged GET in a bucket). Reads go a chunk at
a time, so a download of any size holds a chunk or two in memory.
"""
import hashlib
from collections.abc import AsyncGenerator, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from asgiref.sync import sync_to_async

from runs.artifacts.checkpoint_files import CheckpointFile

CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Piece:
    size: int
    data: bytes = b""  # literal bytes, when `file` is None
    file: CheckpointFile | None = None  # a stored file's bytes (zeros past its end, if it shrank)


def literal(data: bytes) -> Piece:
    return Piece(len(data), data=data)


def of_file(file: CheckpointFile) -> Piece:
    return Piece(file.size, file=file)


def total_size(pieces: list[Piece]) -> int:
    return sum(piece.size for piece in pieces)


def fingerprint(pieces: list[Piece]) -> str:
    """What identifies these bytes without reading the files: the literal bytes, and each file's
    path, size and modification time (a checkpoint's files are written once, then kept; a file
    written again has another modification time)."""
    digest = hashlib.sha256()
    for piece in pieces:
        if piece.file is None:
            digest.update(b"d%d:" % piece.size + piece.data)
        else:
            file = piece.file
            digest.update(f"f{file.path.as_posix()!r}:{file.size}:{file.mtime!r}".encode())
    return digest.hexdigest()[:40]


def reads(pieces: list[Piece], start: int, end: int) -> Iterator[tuple[Piece, int, int]]:
    """(piece, offset in it, length) for bytes start..end (inclusive) of the pieces, at most CHUNK each."""
    position = 0
    for piece in pieces:
        low, high = max(start, position), min(end + 1, position + piece.size)
        for offset in range(low - position, high - position, CHUNK):
            yield piece, offset, min(CHUNK, high - position - offset)
        position += piece.size
        if position > end:
            return


class PieceReader:
    """Reads pieces at offsets, keeping the file being read open while the reads follow each other."""

    def __init__(self):
        self.piece: Piece | None = None
        self.handle: BinaryIO | None = None
        self.position = 0

    def read(self, piece: Piece, offset: int, length: int) -> bytes:
        if piece.file is None:
            return piece.data[offset:offset + length]
        if self.handle is None or piece is not self.piece or offset != self.position:
            self.close()
            self.piece, self.handle = piece, open_at(piece.file, offset)
        data = self.handle.read(length)
        self.position = offset + length
        return data + b"\0" * (length - len(data))  # a file that shrank: the length stays as announced

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
        self.piece, self.handle = None, None


def open_at(file: CheckpointFile, offset: int) -> BinaryIO:
    """The file opened at `offset`: sought where the stream can seek, else read up to it."""
    handle = file.open()
    if offset and handle.seekable():
        handle.seek(offset)
    else:
        skipped = 0
        while skipped < offset and (block := handle.read(min(CHUNK, offset - skipped))):
            skipped += len(block)
    return handle


def iter_bytes(pieces: list[Piece], start: int, end: int) -> Iterator[bytes]:
    """Bytes start..end of the pieces, a chunk at a time (for a synchronous server)."""
    reader = PieceReader()
    try:
        for piece, offset, length in reads(pieces, start, end):
            yield reader.read(piece, offset, length)
    finally:
        reader.close()


async def aiter_bytes(pieces: list[Piece], start: int, end: int) -> AsyncGenerator[bytes, None]:
    """The same, each read in a thread of its own: under ASGI the server sends a chunk before the
    next is read (a synchronous iterator would be read whole into memory first), and a slow disk
    or bucket holds neither the event loop nor the thread that runs Django's synchronous views."""
    reader = PieceReader()
    read = sync_to_async(reader.read, thread_sensitive=False)
    try:
        for piece, offset, length in reads(pieces, start, end):
            yield await read(piece, offset, length)
    finally:
        reader.close()
