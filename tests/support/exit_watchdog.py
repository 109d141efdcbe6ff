"""Ends a pytest process that hangs after its summary, saying what held it.

Python waits at exit for every non-daemon thread (a ThreadPoolExecutor's among them) and for
multiprocessing's children; one a test leaked, blocked on a socket that never answers, holds the
whole pass until CI's own limit ends the job, with no word of why. Armed when pytest unconfigures,
the watchdog prints every thread's stack and the children still alive, then exits with the
session's own status: the tests did run, and the stacks name the leak to fix. A hang the thread
cannot run through (the interpreter finalising) meets faulthandler's own timer, a C thread that
needs no interpreter: it prints the stacks and exits with 1 a little later.
"""
import faulthandler
import os
import sys
import threading
import time

GRACE_S = 90
BACKSTOP_S = 30  # after GRACE_S


def arm(exit_status: int, grace_s: float = GRACE_S) -> threading.Thread:
    watchdog = threading.Thread(target=_end_after, args=(exit_status, grace_s), name="exit-watchdog", daemon=True)
    watchdog.start()
    faulthandler.dump_traceback_later(grace_s + BACKSTOP_S, exit=True, file=sys.__stderr__)
    return watchdog


def _end_after(exit_status: int, grace_s: float) -> None:
    time.sleep(grace_s)
    out = sys.__stderr__
    print(f"\npytest did not exit within {grace_s:.0f} s of its summary; what still runs:", file=out, flush=True)
    for thread in threading.enumerate():
        print(f"  thread {thread.name!r} daemon={thread.daemon}", file=out)
    print(f"  child processes: {_children() or 'none'}", file=out, flush=True)
    faulthandler.dump_traceback(file=out, all_threads=True)
    out.flush()
    os._exit(exit_status)


def _children() -> list[str]:
    import psutil  # the trainer stack's, which `make test` installs

    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            found.append(f"{child.pid} {' '.join(child.cmdline())[:120]}")
        except psutil.Error:
            continue  # gone meanwhile
    return found
