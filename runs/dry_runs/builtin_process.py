"""Built-in rewards and built-in environment steps of dry runs, run in processes that are killed
when they pass DRY_RUN_TIMEOUT_S (worker/trainer/for_control_plane/builtin_child.py is the other side).

A thread of the web server cannot be stopped, and one busy with a hostile input (a format
regex that backtracks, an expression too large to compute) holds the GIL that every other
request needs. A few warm processes (about 1 s to start: pydantic and the catalogs) take the
calls instead, one call each at a time; a call past its limit kills its process, and the next
call starts a fresh one.
"""
import atexit
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, cast

from django.conf import settings

from worker.trainer.for_control_plane.sandbox import ResultError, SandboxError, check_values, protocol

ROOT = Path(__file__).resolve().parents[2]
POOL_SIZE = 2
START_TIMEOUT_S = 30.0
MEMORY_BYTES = 1024 * 1024 * 1024
REPLY_BYTES = 4 * 1024 * 1024


class BuiltinProcess:
    """One child: started warm, asked one call at a time, killed when a call runs past its limit."""

    def __init__(self):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "worker.trainer.for_control_plane.builtin_child", str(MEMORY_BYTES)], cwd=ROOT,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True,
            env={"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1"})
        # Popen gives both pipes for PIPE; typed as optional all the same.
        self.requests, self.replies = cast(IO[bytes], self.proc.stdin), cast(IO[bytes], self.proc.stdout)
        try:
            protocol.read_frame(self.replies.fileno(), 4096, time.monotonic() + START_TIMEOUT_S)
        except (TimeoutError, EOFError, protocol.FrameError) as exc:
            self.kill()
            raise SandboxError("crashed", f"the process for built-ins did not start ({type(exc).__name__})") from None
        self._ids = 0

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def ask(self, request: dict, timeout_s: float) -> dict:
        self._ids += 1
        request = {**request, "id": self._ids}
        try:
            protocol.write_frame(self.requests.fileno(), request)
            reply = protocol.read_frame(self.replies.fileno(), REPLY_BYTES, time.monotonic() + timeout_s)
        except TimeoutError:
            self.kill()
            raise SandboxError("timeout", f"took longer than {timeout_s:g} s (the dry-run limit, "
                                          "DRY_RUN_TIMEOUT_S); the call was stopped") from None
        except (EOFError, BrokenPipeError):
            self.kill()
            raise SandboxError("crashed", "the process for built-ins died during the call (out of memory?); "
                                          "it was replaced") from None
        except protocol.FrameError as exc:
            self.kill()
            raise SandboxError("result_size", f"the reply is too large or unreadable ({exc})") from None
        if reply.get("id") != request["id"]:
            self.kill()
            raise SandboxError("protocol", "a reply to another request; the process was replaced")
        if not reply.get("ok"):
            kind = "memory" if reply.get("kind") == "memory" else "exception"
            raise SandboxError(kind, str(reply.get("message", "")))
        return reply

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # its own session: anything it started goes too
            except ProcessLookupError:
                pass  # it ended meanwhile
            self.proc.wait()
        for stream in (self.requests, self.replies):
            try:
                stream.close()
            except OSError:
                pass


class BuiltinPool:
    """At most `size` calls at once, each on a process of its own; a further call waits its turn."""

    def __init__(self, size: int = POOL_SIZE):
        self._slots = threading.BoundedSemaphore(size)
        self._idle: list[BuiltinProcess] = []
        self._lock = threading.Lock()
        self.closed = False

    def reward(self, builtin: str, params: dict, prompts: list, completions: list, columns: dict) -> list:
        """The built-in reward's values (checked as user code's are); SandboxError otherwise."""
        reply = self._call({"op": "reward", "builtin": builtin, "params": params, "prompts": list(prompts),
                            "completions": list(completions), "columns": {k: list(v) for k, v in columns.items()}})
        try:
            return check_values(reply.get("values"), len(completions))
        except ResultError as exc:
            raise SandboxError(exc.kind, str(exc)) from None

    def env_step(self, builtin: str, params: dict, tool_format: str, messages: list, row: dict):
        """The built-in environment's reply to the last assistant turn; SandboxError otherwise."""
        return self._call({"op": "env_step", "builtin": builtin, "params": params, "tool_format": tool_format,
                           "messages": messages, "row": row}).get("reply")

    def _call(self, request: dict) -> dict:
        with self._slots:
            process = self._take()
            try:
                return process.ask(request, float(settings.DRY_RUN_TIMEOUT_S))
            finally:
                self._give_back(process)

    def _take(self) -> BuiltinProcess:
        with self._lock:
            if self.closed:
                raise RuntimeError("the pool of built-in processes is closed")
            while self._idle:
                process = self._idle.pop()
                if process.alive:
                    return process
        return BuiltinProcess()

    def _give_back(self, process: BuiltinProcess) -> None:
        with self._lock:
            if process.alive and not self.closed:
                self._idle.append(process)
                return
        process.kill()

    def close(self) -> None:
        with self._lock:
            self.closed = True
            idle, self._idle = self._idle, []
        for process in idle:
            process.kill()


_pool: BuiltinPool | None = None
_pool_lock = threading.Lock()


def shared_builtins() -> BuiltinPool:
    global _pool
    with _pool_lock:
        if _pool is None or _pool.closed:
            _pool = BuiltinPool()
            atexit.register(_pool.close)
        return _pool
