"""The vLLM dev-mode endpoints weight sync uses, with explicit timeouts and clear failures.

A refusal is a WeightSyncError, the failure of every weight sync backend (weight_sync/), which
all talk through this client, as does the time slicing's pause."""
from contextlib import contextmanager
from pathlib import Path

import httpx

from worker.trainer.inference.api_key_guard import bearer


class WeightSyncError(RuntimeError):
    """The server did not take the new weights. It may be unusable: treat as fatal for it."""


class ServerUnreachable(WeightSyncError):
    """No answer at all: the server, or its machine, is gone."""


class VllmAdminClient:
    def __init__(self, base_url: str, timeout_s: float = 300.0, transport: httpx.BaseTransport | None = None,
                 api_key: str | None = None):
        """`api_key`: the server's, which it asks of every request but /health (inference/api_key_guard.py)."""
        self._http = httpx.Client(base_url=base_url.rstrip("/"), timeout=timeout_s, transport=transport,
                                  headers=bearer(api_key))

    def post(self, path: str, json: dict | None = None, params: dict | None = None) -> dict:
        return self._answer(path, self._send("POST", path, json=json, params=params))

    def put_file(self, path: str, file: Path, chunk_bytes: int = 1 << 20) -> dict:
        """`file` streamed as the body, never whole in memory, with its length (the server refuses
        a body without one: a cut-off upload must not pass for a whole one)."""
        def pieces():
            with file.open("rb") as handle:
                while piece := handle.read(chunk_bytes):
                    yield piece

        response = self._send("PUT", path, content=pieces(), headers={"Content-Length": str(file.stat().st_size)})
        return self._answer(path, response)

    def _send(self, method: str, path: str, **options) -> httpx.Response:
        try:
            return self._http.request(method, path, **options)
        except httpx.TransportError as exc:
            raise ServerUnreachable(f"vLLM server unreachable during {path}: {exc}") from exc

    @staticmethod
    def _answer(path: str, response: httpx.Response) -> dict:
        if response.status_code >= 400:
            raise WeightSyncError(f"vLLM refused {path} with HTTP {response.status_code}: {response.text[:500]}")
        if not response.content:
            return {}
        if response.headers.get("content-type", "").startswith("application/json"):
            return response.json()
        return {"text": response.text}  # /v1/load_lora_adapter answers in plain text

    def world_size(self) -> int | None:
        """The server's GPU workers over all its engines (tensor × pipeline × data parallel): the
        ranks an NCCL weight transfer must reach. None where the server does not say (no such
        endpoint before vLLM's RL API)."""
        response = self._send("GET", "/get_world_size")
        if response.status_code == 404:
            return None
        size = self._answer("/get_world_size", response).get("world_size")
        return size if isinstance(size, int) else None

    # --- pause / resume around an update ---
    def pause(self, mode: str) -> None:
        self.post("/pause", params={"mode": mode})

    def resume(self) -> None:
        self.post("/resume")

    def reset_prefix_cache(self) -> None:
        self.post("/reset_prefix_cache")

    def reload_weights(self, weights_path: str, allow_direct: bool = True) -> dict:
        """The server's answer: which reload it used (direct or vllm), why not the direct one, seconds.

        Our worker extension's reload (inference/worker_extension.py), which every server this
        project launches has: vLLM's own would leave a tied output head stale, and on a CPU the
        direct reload is faster."""
        return self.worker_call("reload_weights_in_place", weights_path=weights_path, allow_direct=allow_direct)

    def keep_lora_adapters_loaded(self) -> dict:
        """Our worker extension's rule that an adapter is read from its files only when it is
        loaded (inference/lora_serving.py): the server's answer, whether it holds and why not."""
        return self.worker_call("keep_lora_adapters_loaded")

    def worker_call(self, method: str, **kwargs) -> dict:
        """A method of our worker extension, run in the server's workers: the first one's answer."""
        answer = self.post("/collective_rpc", json={"method": method, "kwargs": kwargs})
        results = answer.get("results") or [{}]
        return results[0] if isinstance(results[0], dict) else {}

    # --- vLLM's weight transfer API (the VLLMWeightSyncClient protocol) ---
    def init_weight_transfer_engine(self, init_info: dict) -> None:
        self.post("/init_weight_transfer_engine", json={"init_info": init_info})

    def start_weight_update(self) -> None:
        self.post("/start_weight_update")

    def update_weights(self, update_info) -> None:
        self.post("/update_weights", json={"update_info": update_info})

    def finish_weight_update(self, weight_version: str | None = None) -> None:
        self.post("/finish_weight_update", json={"weight_version": weight_version} if weight_version else None)

    def shutdown_weight_transfer_engine(self) -> None:
        self.post("/shutdown_weight_transfer_engine")

    def close(self) -> None:
        self._http.close()


class ServerPause:
    """Holds the server's generation paused; nested holds reach the server once.

    On a CPU the trainer pauses generation for a whole step (inference/time_slicing.py), and
    the weight sync at its end pauses too. Were the sync to resume, the engine would start
    a step, and the outer resume would queue behind it: seconds a step on a CPU (bench/LOG.md,
    2026-11-21). One training thread uses it: no lock.
    """

    def __init__(self, client: VllmAdminClient):
        self.client = client
        self._depth = 0

    @property
    def held(self) -> bool:
        return self._depth > 0

    @contextmanager
    def paused(self, mode: str):
        """`mode` (keep, wait, abort) applies when this is the outermost hold."""
        if self._depth == 0:
            self.client.pause(mode)
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0:
                self.client.resume()
