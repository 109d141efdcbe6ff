"""Uploads a run's checkpoints to the control plane in the background while training goes on.

One thread, oldest checkpoint first. The upload declares its files, then each file goes in
chunks (each with its sha256, checked as it arrives) from the offset the control plane says it
holds, so a broken upload goes on where it stopped; then the manifest (sizes, sha256s). The
control plane answers that at once and checks and stores the checkpoint in the background
(runs/checkpoints/views/upload.py); this thread polls the upload's state, each wait bounded,
until it is done, or failed naming the files to send again, which it sends again. While the
control plane is away, or its disk is full, the upload waits and tries again with a growing
pause; training never waits for it. A checkpoint is reported uploaded only once listed, and only
then may the trainer remove its local copy. The run's log says each of these turns.
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

from worker.trainer.checkpoints.manifest import CheckpointManifest, ManifestFile, files_in

log = logging.getLogger(__name__)
CHUNK = 8 * 1024 * 1024
RECOMPLETE_S = 300.0  # while the control plane finishes an upload (runs/checkpoints/models/upload.py)


@dataclass(frozen=True)
class UploadJob:
    folder: Path
    step: int
    model_version: int


class UploadRefused(Exception):
    """The control plane refused the upload for good (not this run's, malformed): not retried."""


class TryAgain(Exception):
    """The control plane is away, answered 5xx, or its disk is full, or a chunk arrived otherwise
    than sent: wait and go on."""


class CheckpointUploader:
    def __init__(self, uploads_url: str, token: str, on_uploaded: Callable[[UploadJob], None],
                 say: Callable[[str, str], None], chunk_bytes: int = CHUNK, max_backoff_s: float = 30.0,
                 transport: httpx.BaseTransport | None = None, max_poll_s: float = 10.0):
        """`uploads_url`: the run's `.../api/runs/<id>/uploads/`. `say(level, message)`: for the run's log."""
        self._http = httpx.Client(base_url=uploads_url.rstrip("/") + "/", timeout=120, transport=transport,
                                  headers={"Authorization": f"Bearer {token}"})
        self.on_uploaded, self.say = on_uploaded, say
        self.chunk_bytes, self.max_backoff_s, self.max_poll_s = chunk_bytes, max_backoff_s, max_poll_s
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
        to_send = list(paths)
        while not self._closing.is_set():
            try:
                self._begin(job, paths)
                while to_send:
                    sent[to_send[0]] = self._send_file(job, to_send[0])
                    to_send.pop(0)
                manifest = CheckpointManifest(step=job.step, model_version=job.model_version,
                                              local_path=str(job.folder), files=[sent[path] for path in paths])
                # The control plane asks again for files that arrived otherwise, or that changed since
                # they were read (a cancel saves again the step it stopped at): they are read anew.
                to_send = self._complete(manifest) or self._await_outcome(job.step, manifest)
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

    def _begin(self, job: UploadJob, paths: list[str]) -> None:
        """Declares the files (their sizes now): the control plane refuses chunks of any other.
        While it finishes an earlier complete of this step (a worker that restarted), it waits
        for that outcome first, then begins anew."""
        files = [{"path": path, "size": (job.folder / path).stat().st_size} for path in paths]
        while self._call("POST", f"{job.step}/begin", json={"files": files}, conflict_ok=True).status_code == 409:
            self._await_outcome(job.step)

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
                    part = chunk[start - position:]
                    answer = self._call("PUT", url, content=part, conflict_ok=True, mismatch_ok=True, headers={
                        "Upload-Offset": str(start), "Upload-Chunk-Sha256": hashlib.sha256(part).hexdigest()})
                    if answer.status_code == 422:  # not kept: sent again from what it holds
                        raise TryAgain(f"{relative} {_detail(answer)}")
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
        """Files the control plane lacks before it can finish ([] once it finishes or has)."""
        answer = self._call("POST", f"{manifest.step}/complete", json=manifest.model_dump(), mismatch_ok=True)
        if answer.status_code == 422:
            again = answer.json()["send_again"]
            self.say("warning", f"checkpoint of step {manifest.step}: {len(again)} file(s) arrived "
                                f"otherwise than sent, sending again: {', '.join(again[:5])}")
            return again
        if answer.json()["state"] == "finishing":
            self.say("info", f"checkpoint of step {manifest.step} sent; the control plane is checking and "
                             f"storing it")
        return []

    def _await_outcome(self, step: int, manifest: CheckpointManifest | None = None) -> list[str]:
        """Polls the upload's state, each wait bounded, until the control plane has finished:
        [] once listed; the files to send again when it found them otherwise than the manifest.
        A failure without files to send again (its store away) is a TryAgain: complete again.
        Every RECOMPLETE_S the complete goes again: the same answer while the finish goes on,
        a new finish where its task was lost (no progress for a while; the control plane says)."""
        pause, said, completed = 0.2, "", time.monotonic()
        while not self._closing.wait(pause):
            if manifest is not None and time.monotonic() - completed > RECOMPLETE_S:
                completed = time.monotonic()
                self._call("POST", f"{step}/complete", json=manifest.model_dump(), mismatch_ok=True)
            state = self._call("GET", f"{step}/").json()
            if state["state"] == "done":
                return []
            if state["state"] == "failed" and state["send_again"]:
                again = state["send_again"]
                self.say("warning", f"checkpoint of step {step}: the control plane found {len(again)} file(s) "
                                    f"otherwise than the manifest, sending again: {', '.join(again[:5])}")
                return again
            if state["state"] in ("failed", "receiving"):  # receiving: reopened by another attempt
                raise TryAgain(f"the control plane did not finish it: {state['detail'] or state['state']}")
            if state["detail"] != said and pause >= self.max_poll_s:  # a long finish says how it goes
                said = state["detail"]
                self.say("info", f"checkpoint of step {step}: {said}")
            pause = min(pause * 2, self.max_poll_s)
        raise UploadRefused("the trainer stopped before the control plane took it; the local copy is kept")

    def _call(self, method: str, url: str, conflict_ok: bool = False, mismatch_ok: bool = False,
              **kwargs) -> httpx.Response:
        try:
            answer = self._http.request(method, url, **kwargs)
        except httpx.TransportError as exc:
            raise TryAgain(f"the control plane did not answer ({exc})") from exc
        if answer.status_code in (200, 202) or (conflict_ok and answer.status_code == 409) or \
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
