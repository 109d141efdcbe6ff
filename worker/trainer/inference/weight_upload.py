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
import shutil
import time
from pathlib import Path

FOLDER_VARIABLE = "GRPO_WEIGHT_UPLOAD_DIR"
ROUTE = "/grpo/weights"
FILE_NAME = "model.safetensors"
WRITE_EVERY_BYTES = 16 * 1024 * 1024  # the body's small messages written to disk in pieces this large


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
    """The request's body written to `path`, in pieces off the event loop; its size."""
    received, pending = 0, bytearray()
    with path.open("wb") as handle:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise Refusal(400, "the client went away before the whole body came")
            pending += message.get("body", b"")
            if len(pending) >= WRITE_EVERY_BYTES or not message.get("more_body"):
                received += len(pending)
                await asyncio.to_thread(handle.write, bytes(pending))
                pending.clear()
            if not message.get("more_body"):
                return received


async def _respond(send, status: int, payload: dict) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": json.dumps(payload).encode()})
