"""One sandboxed process as the parent sees it: start, load a source, call, kill."""
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, cast

from worker.trainer.processes.groups import kill_process_group
from worker.trainer.rewards.sandbox.protocol import FrameError, FrameTooLarge, read_frame, write_frame
from worker.trainer.rewards.sandbox.errors import SandboxError
from worker.trainer.rewards.sandbox.isolation import (ALLOW_NETWORK, ALLOW_UNCONFINED_FILES, Isolation,
                                                      files_refusal, refusal)
from worker.trainer.rewards.sandbox.limits import SandboxLimits
from worker.trainer.rewards.sandbox.results import ResultError, check_values

CHILD = Path(__file__).with_name("child.py")
START_TIMEOUT_S = 30.0
KEEPER_GRACE_S = 5.0


def clean_environment(workdir: str) -> dict:
    """Nothing of ours (settings, tokens, database URLs) reaches user code: only these."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": workdir, "TMPDIR": workdir, "LANG": "C.UTF-8",
            "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


class SandboxProcess:
    _ids = itertools.count(1)

    def __init__(self, limits: SandboxLimits, isolation: Isolation | None = None):
        self.limits = limits
        isolation = isolation or Isolation()
        self.loaded: dict[str, dict] = {}  # digest → what its load told
        self.workdir = tempfile.mkdtemp(prefix="reward-sandbox-")
        self.output_path = os.path.join(self.workdir, ".output")
        with open(self.output_path, "a+b") as capture:  # read back after each call
            self.proc = subprocess.Popen(
                [sys.executable, "-I", str(CHILD), json.dumps(limits.as_dict()), json.dumps(isolation.as_dict())],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=capture, cwd=self.workdir,
                env=clean_environment(self.workdir), start_new_session=True, close_fds=True,
            )
        # Popen gives both pipes for PIPE; typed as optional all the same.
        self.requests, self.replies = cast(IO[bytes], self.proc.stdin), cast(IO[bytes], self.proc.stdout)
        try:
            hello = read_frame(self.replies.fileno(), 4096, time.monotonic() + START_TIMEOUT_S)
        except (TimeoutError, EOFError, FrameError) as exc:
            detail = self._startup_output()
            self.kill()
            # A SandboxError: a dry run shows it as the row's error, a run fails at start with it.
            raise SandboxError("crashed", f"the reward sandbox process did not start ({type(exc).__name__}): "
                                          f"{detail}") from None
        self.pid, self.confinement = hello["pid"], hello["confinement"]
        self._judge_confinement(hello, isolation)

    def _judge_confinement(self, hello: dict, isolation: Isolation) -> None:
        """Refuses (killing the process, before any user code reached it) what is not confined
        enough, unless the operator accepted that risk; says so in `confinement` if they did."""
        if not hello["network_refused"]:
            if not isolation.allow_network:
                self.kill()
                raise SandboxError("refused", refusal(self.confinement))
            self.confinement += f"; network open ({ALLOW_NETWORK}=1)"
        if not hello.get("files_confined"):
            if not isolation.allow_unconfined_files:
                self.kill()
                raise SandboxError("refused", files_refusal(self.confinement))
            self.confinement += f"; files not confined ({ALLOW_UNCONFINED_FILES}=1)"

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def run(self, source: str, digest: str, prompts: list, completions: list, columns: dict) -> tuple[list, str]:
        """Values and printed output of one call; SandboxError otherwise. After an error whose
        `recycle` is set (see `needs_replacing`) the process must not be used again."""
        _, output = self.load(source, digest, "reward")
        reply = self._ask({"op": "call", "digest": digest, "prompts": prompts, "completions": completions,
                           "columns": columns}, self.limits.call_timeout_s, output)
        try:
            values = check_values(reply.get("values"), len(completions))
        except ResultError as exc:  # a well-behaved child checked already; this one sent something else
            raise SandboxError(exc.kind, str(exc), output=output) from None
        return values, output + reply.get("output", "")

    def load(self, source: str, digest: str, entry: str) -> tuple[dict, str]:
        """What loading `source` told (an environment's tools), and what it printed (only the first time)."""
        if digest in self.loaded:
            return self.loaded[digest], ""
        reply = self._ask({"op": "load", "digest": digest, "source": source, "entry": entry},
                          self.limits.load_timeout_s)
        told = {}
        if entry == "environment":
            if not isinstance(reply.get("tools"), list):
                self.kill()
                raise SandboxError("protocol", "a load without the environment's tools; the process was replaced")
            told = {"tools": reply["tools"]}
        self.loaded[digest] = told
        return self.loaded[digest], reply.get("output", "")

    def env_call(self, op: str, source: str, digest: str, request: dict) -> tuple[object, str]:
        """What an environment's `start` (op env_start) or `step` (env_step) returned, as JSON, and
        what it printed; SandboxError otherwise."""
        _, output = self.load(source, digest, "environment")
        reply = self._ask({"op": op, "digest": digest, **request}, self.limits.call_timeout_s, output)
        return reply.get("value"), output + reply.get("output", "")

    @property
    def needs_replacing(self) -> bool:
        return not self.alive or len(self.loaded) >= self.limits.sources_per_process

    def _ask(self, request: dict, timeout_s: float, earlier_output: str = "") -> dict:
        request["id"] = next(self._ids)
        deadline = time.monotonic() + timeout_s
        try:
            write_frame(self.requests.fileno(), request)
            reply = read_frame(self.replies.fileno(), self.limits.reply_bytes, deadline)
        except TimeoutError:
            self.kill()
            raise SandboxError("timeout", f"took longer than {timeout_s:g} s; the call was stopped and its "
                                          "process replaced", output=earlier_output) from None
        except (EOFError, BrokenPipeError):
            raise SandboxError("crashed", self._death_message(), output=earlier_output) from None
        except FrameTooLarge as exc:
            self.kill()
            raise SandboxError("result_size", f"the reply is too large ({exc})", output=earlier_output) from None
        except FrameError as exc:
            self.kill()
            raise SandboxError("protocol", f"unreadable reply ({exc}); the process was replaced") from None
        if reply.get("id") != request["id"]:
            self.kill()
            raise SandboxError("protocol", "a reply to another request; the process was replaced")
        if reply.get("recycle"):
            self.kill()
        if not reply.get("ok"):
            output = earlier_output + str(reply.get("output", ""))
            line = reply.get("line") if isinstance(reply.get("line"), int) else None
            kind = str(reply["kind"]) if reply.get("kind") in _CHILD_KINDS else "protocol"
            raise SandboxError(kind, str(reply.get("message", "")), str(reply.get("traceback") or ""), line, output)
        return reply

    def _death_message(self) -> str:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.returncode
        self.kill()
        if code is not None and code < 0:
            name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
            how = f"was killed by {name}"
        else:
            how = f"exited with code {code}"
        hint = " (out of memory?)" if code in (-signal.SIGKILL, -signal.SIGSEGV, -signal.SIGABRT) else ""
        return f"the reward process {how}{hint} during the call; it was replaced"

    def _startup_output(self) -> str:
        try:
            return Path(self.output_path).read_text(errors="replace")[-2000:] or "no output"
        except OSError:
            return "no output"

    def kill(self) -> None:
        """Kills the process and anything user code started (keeper.py: even in sessions of their
        own), and removes its directory. The keeper is asked first (it runs no user code, so it
        answers at once); its process group is killed only if it has not."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(KEEPER_GRACE_S)
            except subprocess.TimeoutExpired:
                kill_process_group(self.proc)
        for stream in (self.requests, self.replies):
            try:
                stream.close()
            except OSError:
                pass
        shutil.rmtree(self.workdir, ignore_errors=True)

    def close(self) -> None:
        """Asks politely (stdin closed ends the loop), then kills."""
        if self.proc.poll() is None:
            try:
                self.requests.close()
                self.proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()


_CHILD_KINDS = {"syntax", "definition", "exception", "memory", "output", "processes", "result_type", "result_length",
                "result_value", "reply_type"}
