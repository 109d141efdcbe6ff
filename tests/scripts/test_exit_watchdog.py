"""A pytest process that hangs at exit on a leaked thread ends, naming what held it."""
import subprocess
import sys
import textwrap

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

HANGS_AT_EXIT = textwrap.dedent("""
    import threading
    from tests.support import exit_watchdog

    def blocked_forever():
        threading.Event().wait()

    threading.Thread(target=blocked_forever, name="leaked-by-a-test").start()  # not a daemon
    exit_watchdog.arm(exit_status=3, grace_s=1)
""")


def test_a_process_held_at_exit_by_a_leaked_thread_ends_with_its_status_and_names_the_thread():
    ended = subprocess.run([sys.executable, "-c", HANGS_AT_EXIT], capture_output=True, text=True, timeout=60,
                           cwd=ROOT)
    assert ended.returncode == 3
    assert "did not exit within 1 s of its summary" in ended.stderr
    assert "thread 'leaked-by-a-test' daemon=False" in ended.stderr
    assert "in blocked_forever" in ended.stderr  # its stack


def test_a_process_that_exits_on_its_own_is_not_held_by_the_watchdog():
    code = "from tests.support import exit_watchdog; exit_watchdog.arm(exit_status=0, grace_s=60)"
    ended = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, cwd=ROOT)
    assert ended.returncode == 0 and ended.stderr == ""
