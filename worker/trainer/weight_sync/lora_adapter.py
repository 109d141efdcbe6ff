"""Weight sync for LoRA runs: the adapter alone, loaded in place by vLLM's LoRA support.

The adapter is a few MB where the model is hundreds: each version is written to a folder of
its own in the run's output and the server reloads it under the same name
(`/v1/load_lora_adapter`, `load_inplace`), so requests keep naming ADAPTER_NAME. vLLM reads
the files lazily, at the first request after a load: a folder is never rewritten, the one
before the newest is kept as well, and both stay after the trainer stops (a server it did not
start may serve them still). Where the server does not take adapters (not started with
--enable-lora, or a rank above what it serves), the first push fails with the server's
answer and the trainer falls back to merged weights (weight_sync/filesystem.py).
"""
import shutil
import time
from pathlib import Path

from worker.trainer.weight_sync.server_api import ServerPause, VllmAdminClient

ADAPTER_NAME = "policy-lora"  # what rollout requests name once the adapter is loaded


class LoraAdapterSync:
    def __init__(self, server_url: str, workdir: Path, pause: ServerPause | None = None,
                 pause_mode: str = "keep", timeout_s: float = 300.0):
        self.pause = pause or ServerPause(VllmAdminClient(server_url, timeout_s=timeout_s))
        self.client = self.pause.client
        self.pause_mode = pause_mode
        self.folder = Path(workdir) / "served-adapters"
        self.loaded = False
        self._previous: Path | None = None  # loaded before the newest: a request may still read it
        self._parts: dict[str, float] = {}

    def push(self, model, version: int) -> float:
        """`model`: a lora.ServedLora. Writes the adapter, then has the server load it."""
        started = time.perf_counter()
        self._parts = {}
        target = self._write(model, version)
        written = time.perf_counter()
        with self.pause.paused(self.pause_mode):
            self.client.post("/v1/load_lora_adapter", json={
                "lora_name": ADAPTER_NAME, "lora_path": str(target), "load_inplace": True})
            self.client.reset_prefix_cache()  # cached prefixes were computed with the old adapter
        self.loaded = True
        self._prune(keep=(target, self._previous))
        self._previous = target
        self._parts = {"write": written - started, "server_load": time.perf_counter() - written}
        return time.perf_counter() - started

    def _write(self, model, version: int) -> Path:
        """A folder of this version's own, complete before the server is told of it."""
        target = self.folder / f"v{version:07d}-{time.time_ns()}"
        partial = target.with_name(target.name + ".partial")
        model.save_adapter(partial)
        partial.rename(target)
        return target

    def _prune(self, keep) -> None:
        for old in self.folder.iterdir():
            if old not in keep:
                shutil.rmtree(old, ignore_errors=True)

    def last_push_note(self) -> str | None:
        return f"vLLM takes the LoRA adapter alone, loaded in place as {ADAPTER_NAME!r}" if self.loaded else None

    def last_push_parts(self) -> dict[str, float]:
        return dict(self._parts)

    def close(self) -> None:
        self.client.close()
