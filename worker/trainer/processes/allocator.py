"""The trainer's memory allocator: jemalloc where the machine has it, glibc's malloc otherwise.

With glibc the trainer's memory grows from step to step (freed pieces are not reused by the
next step's tensors); jemalloc keeps it flat (`python -m bench.trainer --trainer-env
GRPO_TRAINER_ALLOCATOR=system` shows the difference; figures in bench/LOG.md).
An allocator is chosen at process start (LD_PRELOAD), so `python -m worker.trainer`
re-executes itself once with it preloaded; the vLLM server it starts does not inherit it.
GRPO_TRAINER_ALLOCATOR: "auto" (jemalloc if found), "system" (glibc), or a library path.
"""
import os
import sys
from pathlib import Path

SETTING = "GRPO_TRAINER_ALLOCATOR"
PRELOADED = "GRPO_TRAINER_PRELOADED_ALLOCATOR"  # what this module added to LD_PRELOAD
# Debian's libjemalloc2 (a dependency of its redis-server), then other common places.
CANDIDATES = ("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2",
              "/usr/lib64/libjemalloc.so.2", "/usr/lib/libjemalloc.so.2", "/usr/local/lib/libjemalloc.so.2")


def chosen_library(environ=os.environ, candidates=CANDIDATES) -> str | None:
    """The library to preload, or None for the system allocator."""
    setting = environ.get(SETTING, "auto").strip() or "auto"
    if setting == "system":
        return None
    if setting != "auto":
        if not Path(setting).is_file():
            raise SystemExit(f"{SETTING}={setting!r}: no such file (use auto, system or a library path)")
        return setting
    return next((path for path in candidates if Path(path).is_file()), None)


def preload_environment(library: str, environ=os.environ) -> dict[str, str] | None:
    """The environment to re-execute with, or None when `library` is already preloaded."""
    preload = environ.get("LD_PRELOAD", "")
    if library in preload.split(":") or environ.get(PRELOADED):
        return None
    return {**environ, "LD_PRELOAD": ":".join(filter(None, [library, preload])), PRELOADED: library}


def reexec_with_chosen_allocator() -> None:
    """Replace this process by itself with the allocator preloaded (returns if nothing to do).
    Runs before torch is imported; the command line is read back from /proc so that a
    wrapper (`python -c ...`, a benchmark) runs again as it was started."""
    library = chosen_library()
    if library is None or sys.platform != "linux":
        return
    environ = preload_environment(library)
    if environ is None:
        return
    argv = Path("/proc/self/cmdline").read_bytes().split(b"\0")[:-1]
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, argv, environ)


def without_preloaded_allocator(environ=os.environ) -> dict[str, str]:
    """Settings that undo the preload for a child (the vLLM server): empty when none was made."""
    library = environ.get(PRELOADED)
    if not library:
        return {}
    rest = [entry for entry in environ.get("LD_PRELOAD", "").split(":") if entry and entry != library]
    return {"LD_PRELOAD": ":".join(rest), PRELOADED: ""}
