"""Uploads a run's checkpoints to the control plane in the background while training goes on.

One thread, oldest checkpoint first. Each file goes in chunks from the offset the control plane
says it holds, so a broken upload goes on where it stopped; then the manifest (sizes, sha256s),
which the control plane checks before it lists the checkpoint (runs/api/views/checkpoint_upload.py).
While the control plane is away, or its disk is full, the upload waits and tries again with a
growing pause; training never waits for it. A checkpoint is reported uploaded only once listed,
and only then may the trainer remove its local copy.
"""
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from worker.trainer.checkpoint_manifest import CheckpointManifest, manifest_of

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
        manifest = manifest_of(job.folder, job.step, job.model_version)
        to_send = [file.path for file in manifest.files]
        while not self._closing.is_set():
            try:
                for path in to_send:
                    self._send_file(job, path)
                to_send = self._complete(manifest)
                if not to_send:
                    break
                # The folder may have been written again since (a cancel saves the step it stopped at).
                manifest = manifest_of(job.folder, job.step, job.model_version)
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

    def _send_file(self, job: UploadJob, relative: str) -> None:
        url, path = f"{job.step}/files/{relative}", job.folder / relative
        size = path.stat().st_size
        offset = self._call("GET", url).json()["received"]
        if offset >= size > 0:
            return
        with path.open("rb") as handle:
            while True:  # an empty file is sent too: the control plane learns it exists
                handle.seek(offset)
                answer = self._call("PUT", url, content=handle.read(self.chunk_bytes),
                                    headers={"Upload-Offset": str(offset)}, conflict_ok=True)
                offset = answer.json()["received"]  # on a 409, where the control plane wants it from
                if offset >= size:
                    return

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


def _detail(answer: httpx.Response) -> str:
    try:
        return str(answer.json().get("detail", answer.text))[:300]
    except ValueError:
        return answer.text[:300]
