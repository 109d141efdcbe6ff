"""What happens to a checkpoint once the trainer has written it.

A trainer on another machine than the control plane sends every checkpoint to it in the
background (uploader.py), which lists it once it has it whole; a local
copy is removed by save_total_limit only after that. A worker on the control plane's disk (it
reads the secret the spec's shared_disk names), or a run with nowhere to upload to, has its
checkpoint listed at once by an event and pruned at once.
"""
import threading
from pathlib import Path

from worker.trainer.checkpoints.saving import TrainerState, checkpoint_size, prune_checkpoints
from worker.trainer.checkpoints.uploader import CheckpointUploader, UploadJob
from worker.trainer.checkpoints.run_folder import shares_the_control_planes_disk
from worker.trainer.spec import LaunchSpec

UPLOAD_WAIT_S = 600.0  # at the end of a run, how long the last uploads may still take


def keeper_for(spec: LaunchSpec, output_dir: Path, report) -> "CheckpointKeeper":
    """Uploads where the spec names an uploads URL and this worker does not share the disk."""
    if not (spec.uploads_url and spec.ingest) or shares_the_control_planes_disk(spec.shared_disk):
        return CheckpointKeeper(output_dir, spec.config.save_total_limit, report)
    return CheckpointKeeper(output_dir, spec.config.save_total_limit, report, uploads_url=spec.uploads_url,
                            token=spec.ingest.token)


class CheckpointKeeper:
    def __init__(self, output_dir: Path, keep_last: int | None, report, uploads_url: str | None = None,
                 token: str | None = None):
        self.output_dir, self.keep_last, self.report = Path(output_dir), keep_last, report
        self._uploaded: set[Path] = set()
        self._closed = False
        self._lock = threading.Lock()
        self.uploader = (CheckpointUploader(uploads_url, token or "", on_uploaded=self._on_uploaded,
                                            say=lambda level, message: report.log(message, level=level))
                         if uploads_url else None)

    def keep(self, folder: Path, state: TrainerState) -> None:
        if self.uploader is None:
            self.report.checkpoint(state.step, str(folder), checkpoint_size(folder), state.model_version)
            self._prune()
        else:
            self.uploader.submit(folder, state.step, state.model_version)

    def close(self, timeout_s: float = UPLOAD_WAIT_S) -> None:
        """Waits for the uploads still going, saying so; what is not uploaded stays on this disk.
        Once: a run that succeeded waited before saying so, and its shutdown must not wait again."""
        if self.uploader is None or self._closed:
            return
        self._closed = True
        if self.uploader.pending:
            self.report.log(f"waiting up to {timeout_s:.0f} s for {self.uploader.pending} checkpoint upload(s)")
        if not self.uploader.close(timeout_s):
            self.report.log(f"{self.uploader.pending} checkpoint(s) not uploaded; they stay in {self.output_dir}",
                            level="warning")

    def _on_uploaded(self, job: UploadJob) -> None:
        with self._lock:
            self._uploaded.add(job.folder)
        self._prune()

    def _prune(self) -> None:
        if not self.keep_last:
            return
        if self.uploader is None:
            prune_checkpoints(self.output_dir, self.keep_last)
            return
        with self._lock:
            uploaded = set(self._uploaded)
        prune_checkpoints(self.output_dir, self.keep_last, may_remove=lambda folder: folder in uploaded)
