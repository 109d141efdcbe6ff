"""A pool of warm sandboxed processes, shared by the threads that score rewards and play environments.

A run calls its reward functions once per group of completions; starting a Python process
for each (~30 ms and more for the imports the code needs) would cost more than the call, so
processes stay up and keep the sources they loaded. A process that timed out, died, ran out
of memory or sent garbage is replaced by a fresh one.
"""
import hashlib
import queue
import threading
import time
from dataclasses import dataclass

from worker.trainer.rewards.sandbox.errors import SandboxError
from worker.trainer.rewards.sandbox.isolation import Isolation
from worker.trainer.rewards.sandbox.limits import SandboxLimits
from worker.trainer.rewards.sandbox.process import SandboxProcess


@dataclass
class CallResult:
    values: list[float | None]
    output: str
    seconds: float


@dataclass
class EnvCall:
    """What an environment's `start` or `step` returned (JSON, as user code gave it: replies.messages_of
    reads it as messages), what it printed, and how long the call took."""
    reply: object
    output: str
    seconds: float


def source_digest(source: str, entry: str = "reward") -> str:
    # The same text loaded as an environment is another entry of the process's table.
    return hashlib.sha256(source.encode() if entry == "reward" else f"{entry}\0{source}".encode()).hexdigest()


class SandboxPool:
    def __init__(self, size: int = 2, limits: SandboxLimits | None = None, isolation: Isolation | None = None):
        if size < 1:
            raise ValueError("a sandbox pool needs at least one process")
        self.size, self.limits = size, limits or SandboxLimits()
        # Read when the pool is made: SANDBOX_ALLOW_NETWORK and SANDBOX_ALLOW_UNCONFINED_FILES of the
        # process that starts sandboxes.
        self.isolation = isolation or Isolation()
        self._idle: queue.Queue[SandboxProcess] = queue.Queue()
        self._lock = threading.Lock()
        self._started = 0
        self.processes_started = 0  # how many were ever started: a run should not see this grow per batch
        self.closed = False

    def call(self, source: str, prompts: list, completions: list, columns: dict) -> CallResult:
        """Runs `reward(prompts, completions, **columns)` from `source`; SandboxError if that fails."""
        started = time.perf_counter()
        values, output = self._on_a_process(lambda process: process.run(
            source, source_digest(source), list(prompts), list(completions),
            {name: list(values) for name, values in columns.items()}))
        return CallResult(values, output, time.perf_counter() - started)

    def env_tools(self, source: str) -> list[dict]:
        """The tools an environment's TOOLS names ({name, description, parameter, parameter_description}
        each), loading it if need be; SandboxError if it does not load."""
        told, _ = self._on_a_process(lambda process: process.load(source, source_digest(source, "environment"),
                                                                   "environment"))
        return told["tools"]

    def env_start(self, source: str, row: dict) -> EnvCall:
        """Runs the environment's `start(row)`: its first messages; reply None where it has no
        `start` (or it returned None), so that the dataset's prompt opens the episode."""
        return self._env_call("env_start", source, {"row": row})

    def env_step(self, source: str, messages: list[dict], row: dict) -> EnvCall:
        """Runs the environment's `step(messages, row)`: its reply to the last assistant turn."""
        return self._env_call("env_step", source, {"messages": messages, "row": row})

    def _env_call(self, op: str, source: str, request: dict) -> EnvCall:
        started = time.perf_counter()
        digest = source_digest(source, "environment")
        reply, output = self._on_a_process(lambda process: process.env_call(op, source, digest, request))
        return EnvCall(reply, output, time.perf_counter() - started)

    def _on_a_process(self, work):
        process = self._acquire()
        try:
            done = work(process)
        except SandboxError:
            self._release(process)
            raise
        except BaseException:
            process.kill()  # interrupted mid-call: its pipe may hold half a reply
            self._release(process)
            raise
        self._release(process)
        return done

    def _acquire(self) -> SandboxProcess:
        while True:
            with self._lock:
                if self.closed:
                    raise RuntimeError("the reward sandbox pool is closed")
                start = self._idle.empty() and self._started < self.size
                if start:
                    self._started += 1
            if start:
                return self._start()
            try:
                return self._idle.get(timeout=0.1)
            except queue.Empty:
                continue  # look again: a process given up on may have freed a place

    def _start(self) -> SandboxProcess:
        try:
            process = SandboxProcess(self.limits, self.isolation)
        except BaseException:
            with self._lock:
                self._started -= 1
            raise
        with self._lock:
            self.processes_started += 1
        return process

    def _release(self, process: SandboxProcess) -> None:
        if self.closed:
            process.close()
        elif process.needs_replacing:
            process.kill()
            # Replaced in the background, so that the next call finds a warm process.
            threading.Thread(target=self._replace, name="reward-sandbox-replace", daemon=True).start()
        else:
            self._idle.put(process)

    def _replace(self) -> None:
        try:
            process = self._start()
        except Exception:  # noqa: BLE001 (the place was given back; the next caller tries again)
            return
        if self.closed:
            process.close()
        else:
            self._idle.put(process)

    def warm_up(self) -> None:
        """Starts every process now, so that the first calls do not wait for them; the first that
        cannot start (a refusal, say) raises, and those started stay in the pool."""
        processes = []
        try:
            for _ in range(self.size):
                processes.append(self._acquire())
        finally:
            for process in processes:
                self._release(process)

    @property
    def confinement(self) -> str:
        process = self._acquire()
        try:
            return process.confinement
        finally:
            self._release(process)

    def close(self) -> None:
        self.closed = True
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
