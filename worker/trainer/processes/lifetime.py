"""Children that die with their parent: no vLLM or trainer left running when a worker is killed.

Linux delivers the signal when the *thread* that started the child exits, so
start children from a thread that lives as long as the process (the task's own
thread in a Celery pool process does).
"""
import ctypes
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1


def kill_me_with_parent() -> None:
    """For Popen(preexec_fn=...): SIGKILL this child when its parent dies. A no-op off Linux."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def process_age_s() -> float:
    """Seconds since this process started (the kernel's start time; 0.0 where unknown)."""
    try:
        with open("/proc/self/stat") as stat:
            # Field 22 counts clock ticks since boot; the name (field 2) may hold spaces.
            start_ticks = int(stat.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as uptime:
            since_boot_s = float(uptime.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0
    return max(0.0, since_boot_s - start_ticks / os.sysconf("SC_CLK_TCK"))


def kill_group_when_parent_dies(poll_s: float = 0.5) -> bool:
    """For a process group leader with children of its own (vLLM: API server, engine core,
    workers): SIGKILL the whole group once the parent is gone. PDEATHSIG would kill the
    leader alone and leave its children running, reparented to init, holding memory.
    Does nothing (False) unless this process leads its own group, so it never reaches a
    caller's group."""
    if os.getpgid(0) != os.getpid():
        return False
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os.killpg(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="kill-group-with-parent", daemon=True).start()
    return True
