"""Weight sync to vLLM servers on machines of their own (inference_machines), which cannot read the
trainer's files: the weights are written once here, as the filesystem sync writes them, sent to
each server's upload route (inference/weight_upload.py) over HTTP, and reloaded there from its own
copy. The servers take them side by side; each keeps generating on the old weights while the bytes
travel and pauses only for its reload."""
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from worker.trainer.inference.weight_upload import FILE_NAME, ROUTE
from worker.trainer.weight_sync.filesystem import FilesystemWeightSync
from worker.trainer.inference.server_api import ServerPause, VllmAdminClient


class HttpWeightPush(FilesystemWeightSync):
    def __init__(self, server_urls: list[str], workdir: Path, pause_mode: str = "keep", timeout_s: float = 300.0,
                 dtype: str | None = None, pause: ServerPause | None = None, direct_reload: bool = True,
                 api_key: str | None = None, transport=None):
        """`pause`: the first server's hold, where the caller shares it; every server asks `api_key`.
        `transport`: the other servers' clients' (tests)."""
        if not server_urls:
            raise ValueError("HttpWeightPush needs at least one server")
        super().__init__(server_urls[0], workdir, pause_mode=pause_mode, timeout_s=timeout_s, dtype=dtype,
                         pause=pause, direct_reload=direct_reload, api_key=api_key)
        self.urls = list(server_urls)
        self.servers = [self.pause] + [
            ServerPause(VllmAdminClient(url, timeout_s=timeout_s, api_key=api_key, transport=transport))
            for url in server_urls[1:]]
        self.last_upload_s: float | None = None

    def push(self, model, version: int) -> float:
        started = time.perf_counter()
        self.last_reload, self.last_upload_s = None, None
        weights = self.write(model) / FILE_NAME
        self.last_write_s = time.perf_counter() - started
        with ThreadPoolExecutor(len(self.servers), thread_name_prefix="weight-push") as pool:
            answers = list(pool.map(lambda server: self._send(server, weights), self.servers))
        self.last_upload_s = max(upload_s for upload_s, _ in answers)
        # The slowest server's reload stands for all: a step waits for it.
        self.last_reload = max((reload for _, reload in answers), key=lambda reload: reload.get("seconds") or 0.0)
        return time.perf_counter() - started

    def _send(self, server: ServerPause, weights: Path) -> tuple[float, dict]:
        """(seconds the upload took, the server's account of its reload)."""
        started = time.perf_counter()
        folder = server.client.put_file(ROUTE, weights)["folder"]
        uploaded_s = time.perf_counter() - started
        with server.paused(self.pause_mode):
            reload = server.client.reload_weights(folder, allow_direct=self.direct_reload)
            server.client.reset_prefix_cache()
        return uploaded_s, reload

    def last_push_note(self) -> str | None:
        note = super().last_push_note()
        if note is None:
            return None
        return f"{note}, after the weights were sent over HTTP to {len(self.urls)} server(s): {', '.join(self.urls)}"

    def last_push_parts(self) -> dict[str, float]:
        parts = super().last_push_parts()
        if self.last_upload_s is not None:
            parts["upload"] = self.last_upload_s
        return parts

    def close(self) -> None:
        super().close()
        for server in self.servers[1:]:
            server.client.close()
