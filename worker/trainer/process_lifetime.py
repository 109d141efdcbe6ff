"""Children that die with their parent: no vLLM or trainer left running when a worker is killed.

Linux delivers the signal when the *thread* that started the child exits, so
start children from a thread that lives as long as the process (the task's own
thread in a Celery pool process does).
"""
import ctypes
import signal
import sys

PR_SET_PDEATHSIG = 1


def kill_me_with_parent() -> None:
    """For Popen(preexec_fn=...): SIGKILL this child when its parent dies. A no-op off Linux."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
