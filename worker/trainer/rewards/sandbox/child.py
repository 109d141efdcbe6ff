"""The sandboxed process: loads reward and environment sources and answers calls, one at a time,
until its stdin closes.

Started as `python -I child.py '<limits json>' '<isolation json>'` in its own working directory
with an emptied environment (process.py). Where the kernel allows, it first makes its own network,
PID and user namespaces (namespaces.py); then it forks the worker that runs user code and stays to
end everything user code starts (keeper.py). The worker confines itself (confine.py) and says in
its hello what applied; the parent decides whether that is enough. Standard library only until
user code imports what it likes. Protocol (protocol.py): {"op": "load"|"call"|"env_start"|
"env_step", ...} frames on stdin, a load naming its entry ("reward", or "environment": `step`,
optional `start` and `TOOLS`); one reply frame each on the original stdout, with what user code
printed (capped buffers for print, a capped file for file descriptors 1 and 2).
"""
import builtins
import io
import json
import linecache
import os
import sys
import traceback
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the same modules as the package's, for the type checker
    from worker.trainer.rewards.sandbox import confine, keeper, namespaces, protocol, results, socket_filter
else:  # run as a script (python -I child.py): its own folder, not the package, and nothing else of ours
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import confine
    import keeper
    import namespaces
    import protocol
    import results
    import socket_filter

    del sys.path[0]  # user code must not import the sandbox's own modules by accident

# The name user code has in tracebacks, by what it defines.
USER_FILES = {"reward": "reward.py", "environment": "environment.py"}
ENTRY_POINT = "reward"


class OutputLimitExceeded(BaseException):
    """BaseException: a user's `except Exception` must not swallow it."""


class CappedText(io.TextIOBase):
    def __init__(self, shared: dict):
        self.shared = shared

    def writable(self):
        return True

    def write(self, text):
        shared = self.shared
        shared["size"] += len(text)
        if len(shared["kept"]) < shared["keep"]:
            shared["kept"] += text[: shared["keep"] - len(shared["kept"])]
        if shared["size"] > shared["limit"]:
            shared["exceeded"] = True
            raise OutputLimitExceeded()
        return len(text)


class Fail(Exception):
    def __init__(self, kind, message, trace="", line=None):
        super().__init__(message)
        self.kind, self.message, self.trace, self.line = kind, message, trace, line


def user_traceback(exc: BaseException) -> tuple[str, int | None]:
    """The traceback cut to the user's own frames, and the line of the last of them."""
    names = set(USER_FILES.values())
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename in names]
    lines = (["Traceback (most recent call last):\n"] + traceback.format_list(frames)) if frames else []
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines), (frames[-1].lineno if frames else None)


class Worker:
    def __init__(self, limits: dict):
        self.limits, self.pid = limits, os.getpid()
        self.functions: dict = {}  # digest → the loaded source's reward function, or its environment entries
        self.sources: dict[str, tuple[str, str]] = {}  # digest → (file name, source): its lines for tracebacks

    def load(self, digest: str, source: str, entry: str = "reward") -> dict:
        filename = USER_FILES[entry]
        try:
            code = compile(source, filename, "exec")
        except SyntaxError as exc:
            raise Fail("syntax", f"syntax error at line {exc.lineno}: {exc.msg}", line=exc.lineno) from None
        except ValueError as exc:  # null bytes
            raise Fail("syntax", f"the code cannot be compiled: {exc}") from None
        self.sources[digest] = (filename, source)
        self.show_lines(digest)
        namespace = {"__name__": f"{entry}_code", "__builtins__": builtins}
        exec(code, namespace)
        if entry == "environment":
            self.functions[digest] = environment_entries(namespace)
            return {"tools": self.functions[digest]["tools"]}
        function = namespace.get(ENTRY_POINT)
        if not callable(function):
            raise Fail("definition", f"the code defines no function named {ENTRY_POINT!r}")
        self.functions[digest] = function
        return {}

    def show_lines(self, digest: str) -> None:
        """Tracebacks read the file's lines from linecache: this source's, not the last one loaded."""
        filename, source = self.sources[digest]
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)

    def call(self, digest: str, request: dict):
        count = len(request["completions"])
        values = self.functions[digest](request["prompts"], request["completions"], **request["columns"])
        try:
            return results.check_values(values, count)
        except results.ResultError as exc:
            raise Fail(exc.kind, str(exc)) from None

    def env_call(self, digest: str, request: dict):
        """What `step(messages, row)` or `start(row)` returned, checked to be JSON (None when
        there is no `start`: the dataset's prompt opens the episode)."""
        entries = self.functions[digest]
        if request["op"] == "env_start":
            value = entries["start"](request["row"]) if entries["start"] else None
        else:
            value = entries["step"](request["messages"], request["row"])
        try:
            return results.check_reply(value)
        except results.ResultError as exc:
            raise Fail(exc.kind, str(exc)) from None

    def handle(self, request: dict) -> dict:
        shared = {"size": 0, "kept": "", "keep": self.limits["output_keep_chars"],
                  "limit": self.limits["output_bytes"], "exceeded": False}
        sys.stdout = sys.stderr = CappedText(shared)
        reply = {"id": request.get("id"), "ok": True}
        try:
            if request["op"] == "load":
                reply.update(self.load(request["digest"], request["source"], request.get("entry", "reward")))
            elif request["op"] == "call":
                self.show_lines(request["digest"])
                reply["values"] = self.call(request["digest"], request)
            else:
                self.show_lines(request["digest"])
                reply["value"] = self.env_call(request["digest"], request)
        except Fail as exc:
            reply.update(ok=False, kind=exc.kind, message=exc.message, traceback=exc.trace, line=exc.line)
        except OutputLimitExceeded:
            pass  # reported below, from the shared counters
        except BlockingIOError as exc:  # fork or a thread past RLIMIT_NPROC; its copies may still be forking
            trace, line = user_traceback(exc)
            reply.update(ok=False, kind="processes", recycle=True, traceback=trace, line=line,
                         message=f"could not start another process ({exc.strerror}): the sandbox allows "
                                 f"{self.limits['processes']} processes and threads at once")
        except MemoryError:
            reply.update(ok=False, kind="memory", recycle=True,
                         message=f"ran out of memory (limit {self.limits['memory_bytes'] // (1 << 20)} MiB)")
        except BaseException as exc:  # noqa: BLE001 (SystemExit too: user code must not end the worker)
            trace, line = user_traceback(exc)
            where = f" (line {line})" if line else ""
            summary = traceback.format_exception_only(type(exc), exc)[-1].strip()
            reply.update(ok=False, kind="exception", message=f"{summary}{where}", traceback=trace, line=line)
        finally:
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        if os.getpid() != self.pid:
            os._exit(0)  # a copy that user code forked, back from the call: only the worker answers
        output, fd_bytes = self.collect_output(shared)
        if shared["exceeded"] or fd_bytes > self.limits["output_bytes"]:
            reply = {"id": request.get("id"), "ok": False, "kind": "output",
                     "message": f"printed more than {self.limits['output_bytes'] // 1024} KiB; "
                                "print less (output is capped per call)"}
        reply["output"] = output
        return reply

    def collect_output(self, shared: dict) -> tuple[str, int]:
        """Printed text plus what reached file descriptors 1 and 2; empties the capture file."""
        size = os.fstat(1).st_size
        raw = os.pread(1, self.limits["output_keep_chars"], 0) if size else b""
        if size:
            os.ftruncate(1, 0)
        text = shared["kept"] + raw.decode("utf-8", errors="replace")
        return text[: self.limits["output_keep_chars"]], size


def environment_entries(namespace: dict) -> dict:
    step, start = namespace.get("step"), namespace.get("start")
    if not callable(step):
        raise Fail("definition", "the code defines no function named 'step'; define step(messages, row)")
    if start is not None and not callable(start):
        raise Fail("definition", "start is defined but is not a function; define start(row) or remove it")
    try:
        tools = results.check_tools(namespace.get("TOOLS", {}))
    except results.ResultError as exc:
        raise Fail(exc.kind, str(exc)) from None
    return {"step": step, "start": start, "tools": tools}


def setup(limits: dict, isolation: dict, spaces: namespaces.Namespaces, sockets: tuple[str, bool]
          ) -> tuple[int, int, dict]:
    """Keeps the protocol pipes apart from what user code can print to; applies the limits.
    The hello for the parent: what confines us, whether the network is refused and the files
    confined, our pid."""
    requests, replies = os.dup(0), os.dup(1)
    os.set_inheritable(requests, False)
    os.set_inheritable(replies, False)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)  # the parent gave us its capture file (read + append) as stderr
    # __stdout__/__stderr__ too (final to the type checker): user code that restores them writes here.
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(  # type: ignore[misc]
        io.FileIO(1, "w", closefd=False), write_through=True)
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(  # type: ignore[misc]
        io.FileIO(2, "w", closefd=False), write_through=True)
    pid = namespaces.host_pid()  # before Landlock hides /proc, as the process limit's count
    processes = confine.apply_process_limit(limits["processes"], in_user_namespace=spaces.user)
    landlock, tcp_refused, files_confined = confine.apply_landlock(
        os.getcwd(), handle_tcp=isolation["landlock_network"], handle_files=isolation["landlock_files"])
    # After Landlock: its setup needs more address space than user code gets.
    confine.apply_rlimits(limits["memory_bytes"], file_bytes=limits["output_bytes"] + (1 << 16))
    confinement = "; ".join([landlock, sockets[0], spaces.describe(), processes])
    return requests, replies, {"ready": True, "confinement": confinement, "pid": pid,
                               "network_refused": sockets[1] or tcp_refused or spaces.net,
                               "files_confined": files_confined}


def main() -> None:
    limits, isolation = json.loads(sys.argv[1]), json.loads(sys.argv[2])
    # While this process has one thread: the kernel gives a user namespace to no other.
    spaces = namespaces.enter() if isolation["namespaces"] else namespaces.Namespaces(why_not="turned off")
    # Before the fork: the keeper and init open no socket either (nor can user code make them).
    sockets = socket_filter.refuse_sockets() if isolation["socket_filter"] else \
        ("no seccomp filter (turned off)", False)
    keeper.start_worker(keep_fds=(0, 1), pid_namespace=spaces.pid)  # from here on, in the worker
    requests, replies, hello = setup(limits, isolation, spaces, sockets)
    protocol.write_frame(replies, hello)
    worker = Worker(limits)
    while True:
        try:
            request = protocol.read_frame(requests, max_bytes=1 << 30)
        except EOFError:
            return
        protocol.write_frame(replies, worker.handle(request))


if __name__ == "__main__":
    main()
