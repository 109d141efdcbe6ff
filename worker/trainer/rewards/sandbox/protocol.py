"""Length-prefixed JSON frames over pipes. Standard library only: both sides import it.

JSON, never pickle: the parent must not be made to run anything by what a sandboxed process sends.
"""
import json
import os
import select
import struct
import time

HEADER = struct.Struct(">I")


class FrameError(ValueError):
    pass


class FrameTooLarge(FrameError):
    pass


def encode(message: dict) -> bytes:
    body = json.dumps(message, separators=(",", ":"), default=str).encode()
    return HEADER.pack(len(body)) + body


def write_frame(fd: int, message: dict) -> None:
    view = memoryview(encode(message))
    while view:
        view = view[os.write(fd, view):]


def _read_exact(fd: int, size: int, deadline: float | None) -> bytes:
    chunks, left = [], size
    while left:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise TimeoutError()
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("the other side closed the pipe")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, max_bytes: int, deadline: float | None = None) -> dict:
    """The next message; TimeoutError past `deadline` (time.monotonic), EOFError, FrameError."""
    (size,) = HEADER.unpack(_read_exact(fd, HEADER.size, deadline))
    if size > max_bytes:
        raise FrameTooLarge(f"{size} bytes, over the limit of {max_bytes}")
    try:
        message = json.loads(_read_exact(fd, size, deadline))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FrameError(f"not JSON: {exc}") from None
    if not isinstance(message, dict):
        raise FrameError(f"expected an object, got {type(message).__name__}")
    return message
