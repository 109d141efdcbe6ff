"""Weight sync through files: write safetensors, have the server reload them in place.

Every sync rewrites the same file (streamed_safetensors.SafetensorsRewriter): the server reads
it only inside the reload, which returns before the next sync writes."""
import os
import shutil
import time
from pathlib import Path

from worker.trainer.training.precision import local_serving_device, served_dtype
from worker.trainer.inference.server_api import ServerPause, VllmAdminClient
from worker.trainer.weights.state_dict import unique_state_dict
from worker.trainer.weights.streamed_safetensors import SafetensorsRewriter


SHARED_MEMORY_ENV = "GRPO_SHARED_MEMORY_DIR"


def shared_memory_dir(fallback: Path) -> Path:
    """Where the weights the server reloads from are written: the folder the worker's supervisor
    made for this run's attempt (GRPO_SHARED_MEMORY_DIR), which it removes once the trainer has
    ended however it ended (a killed trainer cannot: a model's copy would stay in memory); else
    /dev/shm where it exists (the write is a memory copy, not a disk write); else `fallback`."""
    if given := os.environ.get(SHARED_MEMORY_ENV):
        return Path(given)
    return shared_memory_root() or fallback


def shared_memory_root() -> Path | None:
    """/dev/shm where the machine has it: files there are memory, not disk."""
    shm = Path("/dev/shm")
    return shm if shm.is_dir() else None


class FilesystemWeightSync:
    def __init__(self, server_url: str, workdir: Path, pause_mode: str = "keep", timeout_s: float = 300.0,
                 dtype: str | None = None, pause: ServerPause | None = None, direct_reload: bool = True,
                 api_key: str | None = None):
        """`dtype`: the server's (--dtype); by default what a server started on this machine serves in.
        `pause`: shared with whoever else pauses the same server (the time slicing of a step).
        `direct_reload`: let the server take the faster direct reload where it applies
        (inference/direct_reload.py); False forces vLLM's own (bench/weight_sync.py compares them)."""
        self.pause = pause or ServerPause(VllmAdminClient(server_url, timeout_s=timeout_s, api_key=api_key))
        self.client = self.pause.client
        self.pause_mode = pause_mode
        self.direct_reload = direct_reload
        self.dtype = dtype or served_dtype(local_serving_device())
        self.folder = shared_memory_dir(Path(workdir)) / f"grpo-weights-{time.time_ns()}"
        self._file: SafetensorsRewriter | None = None
        self.last_reload: dict | None = None  # the server's account of the latest reload
        self.last_write_s: float | None = None

    def write(self, model) -> Path:
        """The folder the server reloads from, holding `model`'s weights."""
        import torch

        if self._file is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            # In the server's dtype: it would cast the fp32 master weights the same way on load,
            # so nothing changes but the size (in bf16, half the bytes to write and for it to read).
            self._file = SafetensorsRewriter(self.folder / "model.safetensors", getattr(torch, self.dtype),
                                             metadata={"format": "pt"})
        self._file.write(unique_state_dict(model))
        return self.folder

    def push(self, model, version: int) -> float:
        started = time.perf_counter()
        self.last_reload = None  # a push that fails reports none of the one before
        target = self.write(model)
        self.last_write_s = time.perf_counter() - started
        # "keep" freezes in-flight requests and continues them on the new weights,
        # so a sync costs the reload, not the longest generation in flight.
        with self.pause.paused(self.pause_mode):
            self.last_reload = self.client.reload_weights(str(target), allow_direct=self.direct_reload)
            self.client.reset_prefix_cache()
        return time.perf_counter() - started

    def last_push_note(self) -> str | None:
        reload = self.last_reload
        if not reload:
            return None
        how = ("the direct reload" if reload.get("reload") == "direct"
               else f"vLLM's reload (not the direct one: {reload.get('why_not_direct')})")
        return f"vLLM took the new weights by {how} in {reload.get('seconds')} s"

    def last_push_parts(self) -> dict[str, float]:
        """The write, and the reload as the server timed it (an older worker extension does not:
        then only the write); the rest of a push is HTTP, the pause and the resume."""
        parts = {} if self.last_write_s is None else {"write": self.last_write_s}
        seconds = (self.last_reload or {}).get("seconds")
        if isinstance(seconds, (int, float)):
            parts["server_reload"] = float(seconds)
        return parts

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        self.client.close()
