"""Weight sync for LoRA runs: the adapter alone, loaded in place by vLLM's LoRA support.

Each version goes, in the server's dtype, to a folder of its own in shared memory, loaded under
the same name (ADAPTER_NAME, `load_inplace`) with generation paused around the load (`keep`); a
new folder per version keeps the prefix cache right without a reset. After the first load the
server keeps adapters in memory (inference/lora_serving.py); the folder before the newest is kept
for a server without that extension. A server that does not take adapters fails the first push,
and the trainer falls back to merged weights (weight_sync/filesystem.py). `python -m bench.lora`
times a push and its parts. Details: docs/capabilities/models.md#what-vllm-is-given-lora_serving.
"""
import shutil
import time
from pathlib import Path

from worker.trainer.training.precision import local_serving_device, served_dtype
from worker.trainer.inference.server_api import WeightSyncError
from worker.trainer.weight_sync.filesystem import shared_memory_dir
from worker.trainer.inference.server_api import ServerPause, VllmAdminClient

ADAPTER_NAME = "policy-lora"  # what rollout requests name once the adapter is loaded


class LoraAdapterSync:
    def __init__(self, server_url: str, workdir: Path, pause: ServerPause | None = None,
                 pause_mode: str = "keep", timeout_s: float = 300.0, dtype: str | None = None,
                 api_key: str | None = None):
        """`pause`: shared with whoever else pauses the same server (the time slicing of a step).
        `dtype`: the server's, by default what this machine serves in."""
        self.pause = pause or ServerPause(VllmAdminClient(server_url, timeout_s=timeout_s, api_key=api_key))
        self.client = self.pause.client
        self.pause_mode = pause_mode
        self.dtype = dtype or served_dtype(local_serving_device())
        self.folder = shared_memory_dir(Path(workdir)) / f"grpo-adapters-{time.time_ns()}"
        self.loaded = False
        self.kept_in_memory: dict | None = None  # the server's answer to keep_lora_adapters_loaded
        self._newest: Path | None = None
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
            loaded = time.perf_counter()
            if not self.loaded:
                self.kept_in_memory = self._keep_in_memory()
                self.loaded = True
        self._prune(keep=(target, self._newest))
        self._newest = target
        self._parts = {"write": written - started, "server_load": loaded - written}
        return time.perf_counter() - started

    def _write(self, model, version: int) -> Path:
        """A folder of this version's own, complete before the server is told of it."""
        import torch

        target = self.folder / f"v{version:07d}-{time.time_ns()}"
        partial = target.with_name(target.name + ".partial")
        model.save_adapter(partial, dtype=getattr(torch, self.dtype))
        partial.rename(target)
        return target

    def _keep_in_memory(self) -> dict:
        try:
            return self.client.keep_lora_adapters_loaded()
        except WeightSyncError as exc:  # a server without our worker extension
            return {"kept": False, "why_not": str(exc)}

    def _prune(self, keep) -> None:
        for old in self.folder.iterdir():
            if old not in keep:
                shutil.rmtree(old, ignore_errors=True)

    def last_push_note(self) -> str | None:
        if not self.loaded:
            return None
        kept = self.kept_in_memory or {}
        how = ("kept in memory between loads" if kept.get("kept")
               else f"read from its files at every engine step ({kept.get('why_not')})")
        return f"vLLM takes the LoRA adapter alone, loaded in place as {ADAPTER_NAME!r} and {how}"

    def last_push_parts(self) -> dict[str, float]:
        return dict(self._parts)

    def close(self) -> None:
        """Removes the adapters' files, the newest too when the server was told to keep adapters in memory."""
        if self.folder.is_dir():
            self._prune(keep=() if (self.kept_in_memory or {}).get("kept") else (self._newest,))
            if not any(self.folder.iterdir()):
                self.folder.rmdir()
        self.client.close()
