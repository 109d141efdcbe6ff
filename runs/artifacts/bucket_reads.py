"""An object in a bucket read as a seekable file: a download that starts mid-file (HTTP Range on
a checkpoint's tar) asks the bucket for the bytes from there (a ranged GET), instead of reading
and dropping everything before them. The GET is made at the first read after a seek, so a seek
costs nothing until bytes are wanted.
"""
import io
from collections.abc import Callable
from typing import Protocol


class ObjectBody(Protocol):
    """A GET's body (botocore's StreamingBody): read(None) reads all that is left."""

    def read(self, amt: int | None = ..., /) -> bytes: ...

    def close(self) -> None: ...


class BucketObjectReader(io.RawIOBase):
    def __init__(self, body_from: Callable[[int], ObjectBody]):
        """`body_from(offset)`: the object's bytes from `offset` on, as a stream (a GET's body)."""
        super().__init__()
        self._body_from, self._position = body_from, 0
        self._body: ObjectBody | None = None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence not in (io.SEEK_SET, io.SEEK_CUR):
            raise io.UnsupportedOperation("a bucket object seeks from its start or from here only")
        position = offset if whence == io.SEEK_SET else self._position + offset
        if position != self._position:
            self._drop_body()
            self._position = position
        return position

    def read(self, size: int = -1) -> bytes:
        if self._body is None:
            self._body = self._body_from(self._position)
        data = self._body.read(size if size >= 0 else None)
        self._position += len(data)
        return data

    def close(self) -> None:
        self._drop_body()
        super().close()

    def _drop_body(self) -> None:
        if self._body is not None:
            self._body.close()
            self._body = None
