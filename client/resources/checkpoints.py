"""Checkpoints: listed, downloaded (whole, or exported as a ready model or a LoRA adapter; resumed
after a broken connection), and pushed to the Hugging Face Hub."""
from pathlib import Path

from client.downloads import Downloaded, Progress, download
from client.session import ApiError, Json, Session

PARTS = ("all", "model", "adapter")


class CheckpointCalls(Session):
    def checkpoints(self, run_id: int) -> Json:
        """The run's checkpoints, by step: id, path, size, whether the control plane stores it."""
        return self._call("GET", f"runs/{run_id}/checkpoints/")

    def download_checkpoint(self, run_id: int, checkpoint_id: int, dest: Path, part: str = "all",
                            file: str | None = None, progress: Progress | None = None) -> Downloaded:
        """The checkpoint as a tar in `dest` (`part` model: a ready-to-serve model; adapter: a LoRA adapter),
        or one `file` of it alone. A part an earlier try left in `<dest>.part` is gone on from."""
        params = {"part": part, **({"file": file} if file is not None else {})}
        return download(self.http, f"runs/{run_id}/checkpoints/{checkpoint_id}/download/", Path(dest),
                        params=params, progress=progress)

    def push_checkpoint(self, run_id: int, checkpoint_id: int, repo_id: str, token: str, part: str = "model",
                        private: bool = True) -> Json:
        """Starts a push to the Hub repository `repo_id` (owner/name) with a write `token` (used for this
        push only, never stored); answers the push at once: follow it with pushes()."""
        body = {"repo_id": repo_id, "token": token, "part": part, "private": private}
        return self._call("POST", f"runs/{run_id}/checkpoints/{checkpoint_id}/push/", json=body)

    def pushes(self, run_id: int) -> Json:
        """The run's pushes to the Hub, newest first, with status and progress (files, bytes)."""
        return self._call("GET", f"runs/{run_id}/pushes/")

    def push(self, run_id: int, push_id: int) -> Json:
        """One push of the run, from pushes(); ApiError 404 when there is none."""
        for push in self.pushes(run_id):
            if push["id"] == push_id:
                return push
        raise ApiError(404, {"detail": f"run {run_id} has no push {push_id}"})
