"""The launcher behind `make run` (scripts/run_local.py): it serves pages and static
files from one web process or (with Redis) several, starts a run worker and a consumer
of the control plane's queue, and after Ctrl-C no process of it is left.

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
import redis

ROOT = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT_S = 90
STOP_TIMEOUT_S = 30
# Settings that would make the launcher use the developer's or the services pass's
# database, broker or port instead of a throwaway embedded setup.
AMBIENT = ("DATA_DIR", "DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "PUBLIC_URL",
           "HOST", "PORT", "QUEUES", "ADMIN_USERNAME", "ADMIN_PASSWORD", "SECRET_KEY",
           "WEB_PROCESSES", "BACKGROUND_CONCURRENCY")
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/3")

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


def wait_for_text(log: Path, text: str, launcher: subprocess.Popen, times: int = 1) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while log.read_text(errors="replace").count(text) < times:
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
        wait_for_text(log, " ready.", launcher, times=2)  # Celery's "celery@host ready.", "controlplane@host ready."
        said = log.read_text()
        assert "Web processes: 1 (the in-memory channel layer works within one process)" in said
        assert "Background consumer: queue controlplane" in said and "-Q controlplane" in said

        sessions = children_of(launcher.pid)
        assert len(sessions) == 3  # the server, the worker and the consumer
        assert len(in_sessions(sessions)) >= 5  # ... and the worker's and the consumer's pool processes

        launcher.send_signal(signal.SIGINT)
        assert launcher.wait(timeout=STOP_TIMEOUT_S) == 0
        assert wait_until_gone(lambda: in_sessions(sessions)) == set()
    finally:
        for pid in in_sessions(sessions) | ({launcher.pid} if launcher.poll() is None else set()):
            os.kill(pid, signal.SIGKILL)
        launcher.wait()


def redis_available() -> bool:
    try:
        return redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except redis.RedisError:
        return False


def web_processes_of(server: int) -> set[int]:
    """uvicorn's --workers processes: its children started through multiprocessing's spawn."""
    return {pid for pid in children_of(server)
            if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()}


@pytest.mark.skipif(not redis_available(), reason=f"no Redis at {REDIS_URL} (the services pass has one)")
def test_with_redis_the_launcher_serves_from_several_web_processes_and_stops_them_all(launcher_env, tmp_path):
    env, env_file, port = launcher_env
    env.update(REDIS_URL=REDIS_URL, WEB_PROCESSES="2")
    log = tmp_path / "launcher.log"
    with log.open("wb") as out:
        launcher = subprocess.Popen([sys.executable, "-m", "scripts.run_local", "--env-file", str(env_file)],
                                    cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    sessions: set[int] = set()
    try:
        wait_for_text(log, f"ready: http://127.0.0.1:{port}/", launcher)
        assert "Web processes: 2 (channel layer: Redis" in log.read_text()
        sessions = children_of(launcher.pid)
        [server] = [pid for pid in sessions if b"uvicorn" in Path(f"/proc/{pid}/cmdline").read_bytes()]
        assert len(web_processes_of(server)) == 2
        with httpx.Client(base_url=f"http://127.0.0.1:{port}/", trust_env=False) as client:
            assert all(client.get("login/").status_code == 200 for _ in range(4))

        launcher.send_signal(signal.SIGINT)
        assert launcher.wait(timeout=STOP_TIMEOUT_S) == 0
        assert wait_until_gone(lambda: in_sessions(sessions)) == set()
    finally:
        for pid in in_sessions(sessions) | ({launcher.pid} if launcher.poll() is None else set()):
            os.kill(pid, signal.SIGKILL)
        launcher.wait()


def test_several_web_processes_without_redis_are_refused_before_anything_is_set_up(launcher_env, tmp_path):
    env, env_file, _port = launcher_env
    env.update(WEB_PROCESSES="3")
    result = subprocess.run([sys.executable, "-m", "scripts.run_local", "--env-file", str(env_file)], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "WEB_PROCESSES=3 needs REDIS_URL" in result.stderr
    assert not (tmp_path / "data" / "db.sqlite3").exists()  # not migrated: nothing was started


@pytest.mark.parametrize("name, raw", [("WEB_PROCESSES", "0"), ("WEB_PROCESSES", "two"),
                                       ("BACKGROUND_CONCURRENCY", "-1")])
def test_a_count_that_is_not_a_whole_number_is_refused_naming_it(launcher_env, name, raw):
    env, env_file, _port = launcher_env
    env[name] = raw
    result = subprocess.run([sys.executable, "-m", "scripts.run_local", "--env-file", str(env_file)], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and f"{name}={raw!r} is not a whole number of at least 1" in result.stderr
