"""Uploads a run's checkpoints to the control plane in the background while training goes on.

One thread, oldest checkpoint first. Each file goes in chunks from the offset the control plane
says it holds, so a broken upload goes on where it stopped; then the manifest (sizes, sha256s),
which the control plane checks before it lists the checkpoint (runs/api/views/checkpoint_upload.py).
While the control plane is away, or its disk is full, the upload waits and tries again with a
growing pause; training never waits for it. A checkpoint is reported uploaded only once listed,
and only then may the trainer remove its local copy.
"""
import hashlib
import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from worker.trainer.checkpoint_manifest import CheckpointManifest, ManifestFile, files_in

log = logging.getLogger(__name__)
CHUNK = 8 * 1024 * 1024


@dataclass(frozen=True)
class UploadJob:
    folder: Path
    step: int
    model_version: int


class UploadRefused(Exception):
    """The control plane refused the upload for good (not this run's, malformed): not retried."""


class TryAgain(Exception):
    """The control plane is away, answered 5xx, or its disk is full: wait and go on."""


class CheckpointUploader:
    def __init__(self, uploads_url: str, token: str, on_uploaded: Callable[[UploadJob], None],
                 say: Callable[[str, str], None], chunk_bytes: int = CHUNK, max_backoff_s: float = 30.0,
                 transport: httpx.BaseTransport | None = None):
        """`uploads_url`: the run's `.../api/runs/<id>/uploads/`. `say(level, message)`: for the run's log."""
        self._http = httpx.Client(base_url=uploads_url.rstrip("/") + "/", timeout=120, transport=transport,
                                  headers={"Authorization": f"Bearer {token}"})
        self.on_uploaded, self.say = on_uploaded, say
        self.chunk_bytes, self.max_backoff_s = chunk_bytes, max_backoff_s
        self._jobs: queue.Queue[UploadJob | None] = queue.Queue()
        self._pending = 0
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._work, name="checkpoint-uploader", daemon=True)
        self._thread.start()

    @property
    def pending(self) -> int:
        with self._lock:
            return self._pending

    def submit(self, folder: Path, step: int, model_version: int) -> None:
        with self._lock:
            self._pending += 1
        self._jobs.put(UploadJob(Path(folder), step, model_version))

    def close(self, timeout_s: float) -> bool:
        """Waits up to `timeout_s` for the submitted uploads; True when all were listed."""
        self._jobs.put(None)
        self._thread.join(timeout_s)
        self._closing.set()  # an upload still waiting for the control plane gives up
        self._thread.join(5)
        self._http.close()
        return self.pending == 0

    # --- the thread ----------------------------------------------------------------
    def _work(self) -> None:
        yield_the_cpu()
        while (job := self._jobs.get()) is not None:
            try:
                self._upload_until_listed(job)
            except UploadRefused as exc:
                self.say("error", f"checkpoint of step {job.step} not uploaded: {exc}")
            except Exception:  # never let one checkpoint stop the ones after it
                log.exception("uploading the checkpoint of step %s", job.step)
                self.say("error", f"checkpoint of step {job.step} not uploaded: an unexpected error")
            finally:
                with self._lock:
                    self._pending -= 1

    def _upload_until_listed(self, job: UploadJob) -> None:
        started, backoff = time.monotonic(), 1.0
        paths = files_in(job.folder)
        sent: dict[str, ManifestFile] = {}
        to_send = paths
        while not self._closing.is_set():
            try:
                for path in to_send:
                    sent[path] = self._send_file(job, path)
                manifest = CheckpointManifest(step=job.step, model_version=job.model_version,
                                              local_path=str(job.folder), files=[sent[path] for path in paths])
                # The control plane asks again for files that arrived otherwise, or that changed since
                # they were read (a cancel saves again the step it stopped at): they are read anew.
                to_send = self._complete(manifest)
                if not to_send:
                    break
            except TryAgain as exc:
                self.say("warning", f"checkpoint of step {job.step}: {exc}; trying again in {backoff:.0f} s")
                self._closing.wait(backoff)
                backoff = min(backoff * 2, self.max_backoff_s)
        else:
            raise UploadRefused("the trainer stopped before the control plane took it; the local copy is kept")
        megabytes = manifest.size_bytes / 2 ** 20
        self.say("info", f"checkpoint of step {job.step} uploaded: {megabytes:.1f} MB in "
                         f"{time.monotonic() - started:.1f} s")
        self.on_uploaded(job)

    def _send_file(self, job: UploadJob, relative: str) -> ManifestFile:
        """Reads the file once, in order, hashing every byte and sending those the control plane
        lacks (all, or the rest after a broken upload); an empty file is sent too."""
        url, path = f"{job.step}/files/{relative}", job.folder / relative
        size = path.stat().st_size
        received = self._call("GET", url).json()["received"]
        digest, position = hashlib.sha256(), 0
        with path.open("rb") as handle:
            while True:
                chunk = handle.read(self.chunk_bytes)
                end = position + len(chunk)
                while received < end or (size == 0 and received == 0 and not chunk):
                    start = max(received, position)
                    answer = self._call("PUT", url, content=chunk[start - position:],
                                        headers={"Upload-Offset": str(start)}, conflict_ok=True)
                    received = answer.json()["received"]  # on a 409, where the control plane is
                    if received < position:  # it lost bytes already read past: the file again
                        return self._send_file(job, relative)
                    if size == 0:
                        break
                digest.update(chunk)
                position = end
                if position >= size or not chunk:  # not chunk: it shrank while read; the manifest says so
                    return ManifestFile(path=relative, size=position, sha256=digest.hexdigest())

    def _complete(self, manifest: CheckpointManifest) -> list[str]:
        """Files the control plane asks for again ([] once the checkpoint is listed)."""
        answer = self._call("POST", f"{manifest.step}/complete", json=manifest.model_dump(), mismatch_ok=True)
        if answer.status_code == 422:
            again = answer.json()["send_again"]
            self.say("warning", f"checkpoint of step {manifest.step}: {len(again)} file(s) arrived "
                                       f"otherwise than sent, sending again: {', '.join(again[:5])}")
            return again
        return []

    def _call(self, method: str, url: str, conflict_ok: bool = False, mismatch_ok: bool = False,
              **kwargs) -> httpx.Response:
        try:
            answer = self._http.request(method, url, **kwargs)
        except httpx.TransportError as exc:
            raise TryAgain(f"the control plane did not answer ({exc})") from exc
        if answer.status_code == 200 or (conflict_ok and answer.status_code == 409) or \
                (mismatch_ok and answer.status_code == 422):
            return answer
        detail = _detail(answer)
        if answer.status_code >= 500:  # 507: its disk is full
            raise TryAgain(f"HTTP {answer.status_code} from the control plane: {detail}")
        raise UploadRefused(f"HTTP {answer.status_code}: {detail}")


def yield_the_cpu() -> None:
    """This thread at the lowest CPU priority (Linux sets it per thread): hashing and sending a
    checkpoint takes the cores only when training leaves them idle."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):
        pass


def _detail(answer: httpx.Response) -> str:
    try:
        return str(answer.json().get("detail", answer.text))[:300]
    except ValueError:
        return answer.text[:300]
