"""Faults on real parts: a killed trainer, vLLM or worker, a cancel, and the control plane
going away for 30 s. Runs end in the right status with nothing left running, and resume
from their last checkpoint with step numbers continuing."""
import json
import os
import signal
import time
from collections import Counter

import pytest

from tests.support.api_runs import ApiRun
from tests.support.asgi_server import AsgiServer
from tests.support.celery_worker import start_worker, stop_worker
from tests.support.processes import processes_mentioning, vllm_engine_processes
from tests.support.seeds import SEED_E2E_RUN

pytestmark = pytest.mark.slow
MAX_STEPS = 6


class LiveRun(ApiRun):
    """A control plane, a worker and one run on the tiny model, driven like a user would."""

    def __init__(self, tmp_path, tiny_model_dir, heartbeat_timeout_s=60, max_steps=MAX_STEPS):
        (tmp_path / "cp").mkdir()
        self.model = str(tiny_model_dir)
        server = AsgiServer(tmp_path / "cp", env={"RUN_HEARTBEAT_TIMEOUT_S": str(heartbeat_timeout_s)}).start()
        seed = SEED_E2E_RUN.replace("max_steps=3", f"max_steps={max_steps}").replace("save_steps=2", "save_steps=1")
        super().__init__(server, server.shell_json(f"MODEL = {self.model!r}\n" + seed)["run_id"])
        self.worker = None

    def start_worker(self):
        self.worker = start_worker(self.server, "default")

    def children(self):
        """vLLM (its command names the model) and the trainer (its command names the run's folder)."""
        run_dir = str(self.server.log_path.parent / "runs")
        engines = vllm_engine_processes(self.server.log_path.parent)  # renamed: they name no model
        return sorted(set(processes_mentioning(self.model)) | set(processes_mentioning(run_dir)) | engines)

    def assert_nothing_left(self, timeout_s=20):
        deadline = time.monotonic() + timeout_s
        while self.children() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert self.children() == []

    def close(self):
        if self.worker is not None and self.worker.poll() is None:
            stop_worker(self.worker)
        self.server.stop()


@pytest.fixture
def live(tmp_path, tiny_model_dir):
    run = LiveRun(tmp_path, tiny_model_dir)
    yield run
    run.close()


def command_line(pid: int) -> str:
    with open(f"/proc/{pid}/cmdline", "rb") as raw:
        return raw.read().replace(b"\0", b" ").decode(errors="replace")


def pid_of(run, fragment):
    pids = [pid for pid in run.children() if fragment in command_line(pid)]
    assert pids, f"no running process mentions {fragment}"
    return pids[0]


def resume_to_the_end(run):
    run.post("resume")
    finished = run.wait_for(lambda r: r["status"] in ("succeeded", "failed"), what="the end")
    assert finished["status"] == "succeeded", finished["error_message"]
    assert run.trained_steps() == list(range(1, MAX_STEPS + 1))  # continued: none twice, none skipped


def test_killed_trainer_fails_the_run_and_resume_finishes_it(live):
    live.post("start")
    live.start_worker()
    live.wait_training()
    os.kill(pid_of(live, "-m worker.trainer --spec"), signal.SIGKILL)
    failed = live.wait_for(lambda r: r["status"] == "failed", timeout_s=60, what="failed")
    assert failed["error_message"].startswith("the trainer was killed by SIGKILL (signal 9)")
    assert any("the trainer was killed by SIGKILL" in line["message"]
               for line in live.logs())
    live.assert_nothing_left()
    resume_to_the_end(live)


def test_killed_vllm_fails_the_run_and_stops_the_trainer(live):
    live.post("start")
    live.start_worker()
    live.wait_training()
    os.kill(pid_of(live, "vllm_cli serve"), signal.SIGKILL)
    failed = live.wait_for(lambda r: r["status"] == "failed", timeout_s=90, what="failed")
    # The reason is whoever said it first: the supervisor, or the trainer that lost its server.
    assert "vLLM" in failed["error_message"]
    live.wait_for_log(lambda line: line["level"] == "error" and
                      line["message"] == "the vLLM server was killed by SIGKILL (signal 9)",
                      what="the supervisor's line on the killed server")
    live.assert_nothing_left()
    resume_to_the_end(live)


def test_killed_worker_leaves_nothing_and_the_run_becomes_lost(tmp_path, tiny_model_dir):
    live = LiveRun(tmp_path, tiny_model_dir, heartbeat_timeout_s=10)
    try:
        live.post("start")
        live.start_worker()
        live.wait_training()
        os.killpg(live.worker.pid, signal.SIGKILL)
        live.worker.wait()
        live.assert_nothing_left()  # vLLM and the trainer die with the worker
        lost = live.wait_for(lambda r: r["status"] == "lost", timeout_s=60, what="lost")
        assert "heartbeat" in lost["error_message"]
        live.start_worker()
        resume_to_the_end(live)
    finally:
        live.close()


@pytest.fixture
def long_run(tmp_path, tiny_model_dir):
    """A run the tiny model cannot finish before a cancel reaches it with the next heartbeat."""
    run = LiveRun(tmp_path, tiny_model_dir, max_steps=200)
    yield run
    run.close()


def metric_points(live) -> tuple[Counter, Counter]:
    """(step, name) of every metric the trainer wrote to its outbox, and of every one stored."""
    events_file = live.server.log_path.parent / "runs" / str(live.run_id) / "events" / "events-trainer-1.jsonl"
    local = Counter((e["step"], name) for e in map(json.loads, events_file.read_text().splitlines())
                    if e["type"] == "metrics" for name in e["values"])
    stored = Counter()
    for name, points in live.get("metrics/", max_points=20000)["series"].items():
        stored.update((step, name) for step in points["step"])
    return local, stored


def test_control_plane_away_for_30_s_loses_and_doubles_nothing_and_a_cancel_then_ends_the_run_in_30_s(long_run):
    """One run for two faults, as a whole product run is a minute of the slow pass: the control
    plane goes away and comes back, the run goes on; then a cancel ends it with a checkpoint."""
    live = long_run
    live.post("start")
    live.start_worker()
    before = live.wait_training()
    live.server.stop()
    time.sleep(30)
    live.server.start()
    live.login()
    running = live.wait_training(step=before["current_step"] + 2)  # went on, and is heard again

    asked = time.monotonic()
    live.post("cancel")
    cancelled = live.wait_for(lambda r: r["status"] == "cancelled", timeout_s=60, what="cancelled")
    assert time.monotonic() - asked <= 30
    assert max(c["step"] for c in live.get("checkpoints/")) >= running["current_step"]
    live.assert_nothing_left()
    assert cancelled["finished_at"]
    deadline = time.monotonic() + 30  # the last points may still be on their way when the status is
    while (points := metric_points(live))[0] != points[1] and time.monotonic() < deadline:
        time.sleep(1)
    local, stored = points
    assert local and stored == local
