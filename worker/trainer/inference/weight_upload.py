"""A vLLM server's route for weights sent over HTTP (`vllm serve --middleware`), for a server on a
machine of its own (inference_machines) that cannot read the trainer's files.

PUT /grpo/weights streams its body into `model.safetensors` in the folder GRPO_WEIGHT_UPLOAD_DIR
names: written under a temporary name and renamed only when whole, so a reload never reads half a
file, and answered with the folder, which the caller hands to the reload as it would a folder of
its own machine (weight_sync/http_push.py). The API key guard runs before it (launch.py makes it
the outer one): no key, no write. One upload at a time; a body that does not match its
Content-Length, or that the folder's disk cannot hold, is refused with the last weights kept.
Pure ASGI, imported by name inside vLLM's API server: it imports nothing of ours.
"""
import asyncio
import json
import os
import queue
import shutil
import threading
import time
from pathlib import Path

FOLDER_VARIABLE = "GRPO_WEIGHT_UPLOAD_DIR"
ROUTE = "/grpo/weights"
FILE_NAME = "model.safetensors"
QUEUED_PIECES = 256  # the body's messages (64 KiB or so each) waiting for the writer


class Refusal(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class WeightUpload:
    def __init__(self, app, folder: str | None = None):
        self.app = app
        chosen = folder if folder is not None else os.environ.get(FOLDER_VARIABLE, "")
        self.folder = Path(chosen) if chosen else None  # no folder: the route is not there
        self.busy = asyncio.Lock()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or self.folder is None or scope["path"] != ROUTE:
            await self.app(scope, receive, send)
            return
        try:
            if scope["method"] != "PUT":
                raise Refusal(405, f"{ROUTE} takes PUT with the weights file as the body")
            if self.busy.locked():
                raise Refusal(409, "another upload of weights is in progress")
            async with self.busy:
                answer = await self._receive(self.folder, _content_length(scope), receive)
            await _respond(send, 200, answer)
        except Refusal as refusal:
            await _respond(send, refusal.status, {"error": str(refusal)})

    @staticmethod
    async def _receive(folder: Path, expected: int, receive) -> dict:
        started = time.perf_counter()
        folder.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(folder).free
        if expected > free:
            raise Refusal(507, f"the weights ({expected} bytes) do not fit in {folder} ({free} bytes free)")
        partial = folder / f"{FILE_NAME}.partial"
        try:
            received = await _body_into(partial, receive)
            if received != expected:
                raise Refusal(400, f"the body held {received} bytes where Content-Length said {expected}")
            partial.replace(folder / FILE_NAME)
        finally:
            partial.unlink(missing_ok=True)
        return {"folder": str(folder), "bytes": received, "seconds": round(time.perf_counter() - started, 4)}


def _content_length(scope) -> int:
    raw = dict(scope.get("headers") or []).get(b"content-length")
    try:
        length = int(raw) if raw is not None else -1
    except ValueError:
        length = -1
    if length < 0:
        raise Refusal(411, f"{ROUTE} needs a Content-Length: a body cut short must not replace the weights")
    return length


async def _body_into(path: Path, receive) -> int:
    """The request's body written to `path` by a thread of its own while more arrives (writing in
    turns with receiving halves the rate: bench/README.md); its size. At most QUEUED_PIECES
    pieces wait for the writer: memory stays bounded whatever the file's size."""
    pieces: queue.Queue = queue.Queue(maxsize=QUEUED_PIECES)
    writer = _Writer(path, pieces)
    writer.start()
    received = 0
    try:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise Refusal(400, "the client went away before the whole body came")
            if body := message.get("body", b""):
                received += len(body)
                await _hand_over(pieces, body)
            if not message.get("more_body"):
                return received
    finally:
        await _hand_over(pieces, None)
        await asyncio.to_thread(writer.join)
        if writer.error is not None:
            raise Refusal(507, f"writing the weights into {path.parent} failed: {writer.error}")


async def _hand_over(pieces: queue.Queue, piece: bytes | None) -> None:
    """Queued at once, or, while the writer is behind, waited for off the event loop (the server
    goes on answering its other requests)."""
    try:
        pieces.put_nowait(piece)
    except queue.Full:
        await asyncio.to_thread(pieces.put, piece)


class _Writer(threading.Thread):
    """Writes the pieces it is handed until None; the first error is kept, and the rest drained."""

    def __init__(self, path: Path, pieces: queue.Queue):
        super().__init__(name="weight-upload-writer", daemon=True)
        self.path, self.pieces = path, pieces
        self.error: OSError | None = None

    def run(self) -> None:
        try:
            handle = self.path.open("wb")
        except OSError as exc:
            self.error, handle = exc, None
        while (piece := self.pieces.get()) is not None:
            if handle is not None and self.error is None:
                try:
                    handle.write(piece)
                except OSError as exc:
                    self.error = exc
        if handle is not None:
            try:
                handle.close()
            except OSError as exc:
                self.error = self.error or exc


async def _respond(send, status: int, payload: dict) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": json.dumps(payload).encode()})
