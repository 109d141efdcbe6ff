"""The launcher behind `make run` (scripts/run_local.py): it serves pages and static
files, starts a worker, and after Ctrl-C no process of it is left.

It runs with this interpreter (the project's venv); the launcher installs nothing.
"""
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT_S = 90
STOP_TIMEOUT_S = 30
# Settings that would make the launcher use the developer's or the services pass's
# database, broker or port instead of a throwaway embedded setup.
AMBIENT = ("DATA_DIR", "DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "PUBLIC_URL",
           "HOST", "PORT", "QUEUES", "ADMIN_USERNAME", "ADMIN_PASSWORD", "SECRET_KEY")

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="finds processes through /proc")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def live_processes() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, session id) of every process that is not a zombie."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue  # gone meanwhile
        state, ppid, _pgrp, session = stat[stat.rindex(")") + 2:].split()[:4]
        if state != "Z":
            found[int(entry)] = (int(ppid), int(session))
    return found


def children_of(pid: int) -> set[int]:
    return {child for child, (ppid, _sid) in live_processes().items() if ppid == pid}


def in_sessions(sessions: set[int]) -> set[int]:
    """Each child leads its own session, which its descendants (Celery's pool) share."""
    return {pid for pid, (_ppid, sid) in live_processes().items() if sid in sessions}


def wait_for_text(log: Path, text: str, launcher: subprocess.Popen) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while text not in log.read_text(errors="replace"):
        assert launcher.poll() is None, f"launcher exited early:\n{log.read_text()}"
        assert time.monotonic() < deadline, f"no {text!r} within {STARTUP_TIMEOUT_S} s:\n{log.read_text()}"
        time.sleep(0.2)


def wait_until_gone(pids_now) -> set[int]:
    deadline = time.monotonic() + 5  # SIGKILLed orphans vanish a moment after the launcher returns
    while pids_now() and time.monotonic() < deadline:
        time.sleep(0.1)
    return pids_now()


@pytest.fixture
def launcher_env(tmp_path):
    port = free_port()
    # The port comes through the settings file, which checks that .env is loaded.
    env_file = tmp_path / "test.env"
    env_file.write_text(f"# as a user's .env\nPORT={port}\n")
    env = {key: value for key, value in os.environ.items() if key not in AMBIENT}
    env.update(DATA_DIR=str(tmp_path / "data"), PYTHONUNBUFFERED="1")
    return env, env_file, port


def test_launcher_serves_and_ctrl_c_leaves_no_process_behind(launcher_env, tmp_path):
    env, env_file, port = launcher_env
    log = tmp_path / "launcher.log"
    with log.open("wb") as out:
        launcher = subprocess.Popen([sys.executable, "-m", "scripts.run_local", "--env-file", str(env_file)],
                                    cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    sessions: set[int] = set()
    try:
        url = f"http://127.0.0.1:{port}/"
        wait_for_text(log, f"ready: {url}", launcher)
        with httpx.Client(base_url=url, trust_env=False) as client:  # no proxy for our own server
            assert client.get("login/").status_code == 200
            assert client.get("static/css/app.css").status_code == 200
        assert "password: " in log.read_text()
        assert (tmp_path / "data" / "admin-credentials.txt").exists()
        wait_for_text(log, " ready.", launcher)  # Celery's "celery@host ready."

        sessions = children_of(launcher.pid)
        assert len(sessions) == 2  # the server and the worker
        assert len(in_sessions(sessions)) >= 3  # ... and the worker's pool process

        launcher.send_signal(signal.SIGINT)
        assert launcher.wait(timeout=STOP_TIMEOUT_S) == 0
        assert wait_until_gone(lambda: in_sessions(sessions)) == set()
    finally:
        for pid in in_sessions(sessions) | ({launcher.pid} if launcher.poll() is None else set()):
            os.kill(pid, signal.SIGKILL)
        launcher.wait()
