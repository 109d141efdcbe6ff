"""Run one `vllm serve` process: start it, wait for /health, keep its output, stop it.

    with VLLMServer.for_config(model_dir, config, log_path=run_dir / "vllm.log") as server:
        httpx.post(server.url + "/v1/completions", json={"model": server.served_model_name, ...})

The server runs in its own process group (its engine and worker processes with it), so
stop() reaches all of them: SIGTERM, a grace period, then SIGKILL.
"""
import collections
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, NoReturn

import httpx

from worker.trainer.config import TrainingConfig
from worker.trainer.inference.api_key_guard import bearer
from worker.trainer.inference.launch import Device, Launch, build_launch, installed_device
from worker.trainer.inference.readiness import ServerNotReady, wait_for_health
from worker.trainer.processes.groups import signal_group, stop_process_group
from worker.trainer.processes.run_environment import run_environment

HEALTH_POLL_S = 0.5


class ServerStartError(RuntimeError):
    """The server died or did not answer /health in time; the message ends with its last output."""

    def __init__(self, reason: str, output_tail: list[str], log_path: Path):
        self.reason, self.output_tail, self.log_path = reason, output_tail, log_path
        lines = "\n".join(output_tail) or "(no output)"
        super().__init__(f"{reason} (full log: {log_path}); last output:\n{lines}")


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of a process group."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
            return [pgid]
        except (ProcessLookupError, PermissionError):
            return []
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] not in ("Z", "X") and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


class VLLMServer:
    def __init__(self, launch: Launch, log_path: Path | str | None = None, startup_timeout_s: float = 300.0,
                 tail_lines: int = 200):
        self.launch = launch
        self.startup_timeout_s = startup_timeout_s
        if log_path is None:
            fd, log_path = tempfile.mkstemp(prefix=f"vllm-{launch.port}-", suffix=".log")
            os.close(fd)
        self.log_path = Path(log_path)
        self._tail: collections.deque[str] = collections.deque(maxlen=tail_lines)
        self._tail_lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._reader: threading.Thread | None = None
        self._stopped = False

    @classmethod
    def for_config(cls, model: str, config: TrainingConfig, *, device: Device | None = None,
                   port: int | None = None, host: str = "127.0.0.1", log_path: Path | str | None = None,
                   gpu_ids: str | None = None, extra_args=(), dtype: str | None = None,
                   api_key: str | None = None, upload_folder: str | None = None) -> "VLLMServer":
        """`api_key` (launch.new_api_key()): asked of every request but /health; None: an open server
        (tests and benchmarks only: a run's server always has one). `upload_folder`: where it takes
        weights sent over HTTP (inference/weight_upload.py)."""
        launch = build_launch(model, config, port=port or free_port(host), host=host,
                              device=device or installed_device(), gpu_ids=gpu_ids, extra_args=extra_args, dtype=dtype,
                              api_key=api_key, upload_folder=upload_folder)
        return cls(launch, log_path=log_path, startup_timeout_s=config.vllm_startup_timeout_s)

    @property
    def url(self) -> str:
        return self.launch.url

    @property
    def served_model_name(self) -> str:
        return self.launch.served_model_name

    @property
    def api_key(self) -> str | None:
        return self.launch.api_key

    @property
    def headers(self) -> dict[str, str]:
        """What a request to this server carries: its API key, where it has one."""
        return bearer(self.api_key)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def exit_code(self) -> int | None:
        return self._proc.poll() if self._proc else None

    def output_tail(self, lines: int = 40) -> list[str]:
        with self._tail_lock:
            return list(self._tail)[-lines:]

    def start(self) -> "VLLMServer":
        if self._proc is not None:
            raise RuntimeError("this server was already started")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        # The cluster's secrets stay with the worker (processes/run_environment.py).
        self._proc = subprocess.Popen(self.launch.argv, env=run_environment(self.launch.env),
                                      stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, start_new_session=True)
        assert self._proc.stdout is not None  # stdout=PIPE
        self._reader = threading.Thread(target=self._copy_output, args=(self._proc.stdout,),
                                        name=f"vllm-output-{self.launch.port}", daemon=True)
        self._reader.start()
        self._started_at = time.monotonic()
        return self

    @property
    def seconds_since_start(self) -> float:
        return time.monotonic() - self._started_at if self._proc is not None else 0.0

    def _copy_output(self, output: IO[bytes]) -> None:
        with open(self.log_path, "ab") as log:
            for raw in output:
                log.write(raw)
                log.flush()
                with self._tail_lock:
                    self._tail.append(raw.decode("utf-8", "replace").rstrip())

    def when_healthy(self, note: Callable[[float], None]) -> threading.Thread:
        """Call `note(seconds since start)` once /health answers, from a thread of its own; nothing
        if the server ends first. Its probes wait as long as the startup wait's: one squeezed
        between a busy trainer and a generating engine may take a second to be answered."""
        def watch() -> None:
            try:
                wait_for_health(self.url, self.startup_timeout_s, lambda: not self.running(), self.api_key)
            except ServerNotReady:
                return  # the server's own watch says why
            note(self.seconds_since_start)

        thread = threading.Thread(target=watch, name=f"vllm-health-{self.launch.port}", daemon=True)
        thread.start()
        return thread

    def wait_until_healthy(self, timeout_s: float | None = None) -> float:
        """Seconds until /health answered 200; on death or timeout, stop and raise ServerStartError."""
        if self._proc is None:
            raise RuntimeError("start() the server before waiting for it")
        timeout_s = self.startup_timeout_s if timeout_s is None else timeout_s
        started = time.monotonic()
        with httpx.Client(timeout=2.0, headers=self.headers) as http:
            while True:
                if not self.running():
                    self._fail(f"vLLM exited with code {self._proc.returncode} before answering /health")
                try:
                    if http.get(self.url + "/health").status_code == 200:
                        return time.monotonic() - started
                except httpx.TransportError:
                    pass
                if time.monotonic() - started > timeout_s:
                    self._fail(f"vLLM did not answer /health within {timeout_s:.0f} s")
                time.sleep(HEALTH_POLL_S)

    def _fail(self, reason: str) -> NoReturn:
        self.stop()
        raise ServerStartError(reason, self.output_tail(), self.log_path)

    def stop(self, grace_s: float = 30.0) -> int | None:
        """Terminate the process group, wait up to `grace_s`, then kill; the exit code (None if never started)."""
        if self._proc is None:
            return None
        if self._stopped:  # its process group id may belong to someone else by now
            return self._proc.returncode
        self._stopped = True
        pgid = self._proc.pid
        stop_process_group(self._proc, grace_s)
        if not self._group_gone(pgid, 5.0):  # engine processes may outlive the API server
            signal_group(pgid, signal.SIGKILL)
            self._group_gone(pgid, 5.0)
        if self._reader is not None:
            self._reader.join(5.0)
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        return self._proc.returncode

    @staticmethod
    def _group_gone(pgid: int, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while group_members(pgid):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
        return True

    def __enter__(self) -> "VLLMServer":
        self.start()
        self.wait_until_healthy()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
