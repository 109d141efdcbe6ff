"""Issue #21's proof on one machine: a worker that cannot read the control plane's files at all
trains a run on an uploaded dataset over the Redis broker, its checkpoint downloads from the run
page byte for byte as the worker wrote it, and a second such worker resumes the run to the end.

How the worker is kept off the control plane's disk: a private mount namespace (`unshare
--mount`; the test needs root). In each worker's namespace the control plane's DATA_DIR, and the
other worker's DATA_DIR, are covered by an empty read-only tmpfs, and the repository (with its
.venv) is mounted read-only, so the worker can neither read the control plane's files nor write
beside the code; it has its own DATA_DIR with its own copy of the tiny model, and an environment
of its own (none of the control plane's DATA_DIR, DATABASE_URL, PUBLIC_URL; HOME in its DATA_DIR).
The test checks, inside the running worker's namespace, that the dataset file, the run's
shared-disk marker and the database are not there for it. The first worker is killed ("its
machine is gone"); the second, with a fresh DATA_DIR and the first one's hidden, can only get
the checkpoint from the control plane's store. The workers still run as root: a process set on
it could reach the hidden folders through another process's /proc/<pid>/root; the product does
nothing of the kind, and what the test checks is the paths it uses.

Not a separate Unix user: a .venv made from an interpreter under root's home (pyenv in /root,
mode 0700) cannot be run by another user, whose process then loads the system's libpython with
another standard library. A namespace hides the paths whatever the interpreter.

The broker is Redis database 5 (NO_SHARED_DISK_BROKER to change it), flushed before and after.
Skipped unless root can make a mount namespace and that Redis answers.
"""
import io
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import tarfile
import time
from pathlib import Path

import httpx
import pytest

from tests.support.asgi_server import ROOT, AsgiServer, logged_in_client
from tests.support.celery_worker import start_worker, stop_worker
from tests.support.controlplane_consumer import start_consumer, stop_consumer, wait_until_consuming
from tests.support.processes import processes_mentioning, vllm_engine_processes

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

BROKER = os.environ.get("NO_SHARED_DISK_BROKER", "redis://127.0.0.1:6379/5")
MODEL_NAME = "tiny-llama"  # found by each worker in its own DATA_DIR/models/
MAX_STEPS, SAVE_STEPS = 20, 4  # the first worker is killed some steps after its first upload: room for it
# The control plane's settings, which a worker on another machine would not have.
CONTROL_PLANE_ONLY = ("DATA_DIR", "DATABASE_URL", "REDIS_URL", "PUBLIC_URL", "CELERY_BROKER_URL", "SECRET_KEY")
ROWS = [{"prompt": f"What is {a} + {b}?", "answer": str(a + b)} for a in range(8) for b in range(8)]
SEED_OWNER = """
import json
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
owner = get_user_model().objects.create_user("owner", password="owner-pass-123")
print(json.dumps({"api_token": Token.objects.create(user=owner).key}))
"""


# --- the workers' machines: a mount namespace each, and a DATA_DIR of their own ---------------------
def redis_problem(url: str) -> str | None:
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2).ping()
    except redis.RedisError as exc:
        return f"Redis at {url} does not answer: {exc}"
    return None


def flush_broker() -> None:
    import redis

    redis.Redis.from_url(BROKER).flushdb()


def namespace_problem() -> str | None:
    if os.geteuid() != 0:
        return "needs root: each worker runs in a private mount namespace"
    if not (shutil.which("unshare") and shutil.which("nsenter")):
        return "needs unshare and nsenter (util-linux)"
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "true"], capture_output=True, text=True)
    return f"cannot make a mount namespace: {probe.stderr.strip()}" if probe.returncode else None


@pytest.fixture
def redis_broker():
    """Skips where the workers cannot be given a namespace, or there is no Redis to be the broker."""
    if problem := namespace_problem() or redis_problem(BROKER):
        pytest.skip(problem)
    flush_broker()
    yield BROKER
    flush_broker()


def machine_without(hidden: list[Path]) -> list[str]:
    """A command prefix: a private mount namespace where `hidden` are empty and read-only and the
    repository is read-only; it then execs the command that follows."""
    covers = "".join(f"mount -t tmpfs -o ro,mode=0 none {shlex.quote(str(path))}\n" for path in hidden)
    repo = shlex.quote(str(ROOT))
    script = f"{covers}mount --bind {repo} {repo}\nmount -o remount,bind,ro {repo}\nexec \"$@\"\n"
    return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-ec", script, "sh"]


def readable_in(worker: subprocess.Popen, path: Path) -> bool:
    """Whether `path` is readable in the running worker's own view of the files."""
    return subprocess.run(["nsenter", "--target", str(worker.pid), "--mount", "--", "test", "-r", str(path)],
                          capture_output=True).returncode == 0


def own_data_dir(data_dir: Path, model_dir: Path) -> Path:
    """A worker's DATA_DIR with the model it serves, as a machine of its own would have it."""
    shutil.copytree(model_dir, data_dir / "models" / MODEL_NAME)
    (data_dir / "home").mkdir()
    return data_dir


def worker_environment(data_dir: Path) -> dict:
    env = {name: value for name, value in os.environ.items() if name not in CONTROL_PLANE_ONLY}
    return {**env, "DATA_DIR": str(data_dir), "HOME": str(data_dir / "home"), "CELERY_BROKER_URL": BROKER,
            "GRPO_DOTENV": "0", "PYTHONDONTWRITEBYTECODE": "1"}


def start_machine(plane, data_dir: Path, hidden: list[Path], log_path: Path) -> subprocess.Popen:
    return start_worker(plane.server, "default", env=worker_environment(data_dir), log_path=log_path,
                        command_prefix=machine_without(hidden))


# --- the control plane, driven as a user would --------------------------------------------------
def jsonl(rows) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


class ControlPlane:
    """A control plane sending runs over the Redis broker, and its API as the owner sees it."""

    def __init__(self, data_dir: Path):
        data_dir.mkdir()
        self.data_dir = data_dir
        self.server = AsgiServer(data_dir, env={"CELERY_BROKER_URL": BROKER, "RUN_HEARTBEAT_TIMEOUT_S": "10"}).start()
        # Its consumer finishes uploaded checkpoints (checked against their manifest, then listed).
        self.consumer = start_consumer(self.server)
        wait_until_consuming(self.consumer)
        token = self.server.shell_json(SEED_OWNER)["api_token"]
        self.api = httpx.Client(base_url=self.server.url, headers={"Authorization": f"Token {token}"}, timeout=30)
        self.browser = logged_in_client(self.server, "owner", "owner-pass-123")

    def post(self, path: str, **kwargs) -> dict:
        response = self.api.post(path, **kwargs)
        assert response.status_code in (200, 201), f"POST {path}: {response.status_code} {response.text}"
        return response.json()

    def upload_dataset(self, content: bytes) -> dict:
        return self.post("/api/datasets/", data={"name": "sums", "source": "upload"},
                         files={"file": ("sums.jsonl", content, "application/x-ndjson")})

    def dataset_file(self, dataset_id: int) -> Path:
        return Path(self.server.shell_json("import json\nfrom runs.models import Dataset\n"
                                           f"print(json.dumps(Dataset.objects.get(pk={dataset_id}).file.path))"))

    def create_run(self, dataset_id: int) -> int:
        reward = self.post("/api/reward-functions/", json={"name": "format", "kind": "builtin", "builtin": "format",
                                                           "params": {"regex": "(?s) .*"}})
        config = {"model": MODEL_NAME, "num_generations": 4, "per_device_train_batch_size": 8,
                  "max_steps": MAX_STEPS, "save_steps": SAVE_STEPS, "save_total_limit": None,
                  "max_prompt_length": 64, "max_completion_length": 12, "learning_rate": 5e-3,
                  "max_inflight_tasks": 8}
        run = self.post("/api/runs/", json={"name": "no shared disk", "dataset": dataset_id, "config": config,
                                            "rewards": [{"reward_function": reward["id"], "weight": 1.0}]})
        return run["id"]

    def run(self, run_id: int, path: str = "") -> dict:
        return self.api.get(f"/api/runs/{run_id}/{path}").json()

    def logs(self, run_id: int) -> list[dict]:
        return self.run(run_id, "logs/?page_size=1000")["results"]

    def run_page_checkpoints(self, run_id: int) -> list[dict]:
        """The checkpoints the run page lists, with their download links, as its script gets them."""
        page = self.browser.get(f"/runs/{run_id}/")
        assert page.status_code == 200
        data = re.search(r'<script id="run-data" type="application/json">(.*?)</script>', page.text, re.S)
        return json.loads(data.group(1))["checkpoints"]

    def wait_for(self, run_id: int, predicate, what: str, logs: list[Path], timeout_s: float = 600) -> dict:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            run = self.run(run_id)
            if predicate(run):
                return run
            time.sleep(0.5)
        tails = "\n".join(f"--- {log.name}:\n{log.read_text()[-3000:]}" for log in logs if log.exists())
        raise AssertionError(f"run never reached {what}; it is {run['status']} at step {run['current_step']}: "
                             f"{run['error_message']}\n{tails}")

    def close(self) -> None:
        self.api.close()
        self.browser.close()
        stop_consumer(self.consumer)
        self.server.stop()


# --- what the workers left on their own disks ------------------------------------------------------
def files_under(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*"))
            if path.is_file()}


def files_in_tar(content: bytes) -> dict[str, bytes]:
    """The archive's files by their path below its one top folder."""
    with tarfile.open(fileobj=io.BytesIO(content)) as tar:
        return {member.name.split("/", 1)[1]: tar.extractfile(member).read() for member in tar.getmembers()
                if member.isfile()}


def trained_steps(run_dir: Path, attempt: int) -> list[int]:
    """The steps the trainer of `attempt` trained, from the events it kept on its worker's disk."""
    events = run_dir / "events" / f"events-trainer-{attempt}.jsonl"
    return sorted({event["step"] for event in map(json.loads, events.read_text().splitlines())
                   if event["type"] == "metrics" and "train/loss" in event["values"]})


def messages_by_attempt(logs: list[dict], run_id: int) -> dict[int, list[str]]:
    """The run's log messages by attempt: each attempt's begin where its worker says it received it."""
    by_attempt, attempt = {}, 0
    for line in logs:
        if received := re.match(rf"worker received run {run_id} \(attempt (\d+)\)", line["message"]):
            attempt = int(received[1])
        by_attempt.setdefault(attempt, []).append(line["message"])
    return by_attempt


def kill_worker(worker: subprocess.Popen) -> None:
    """The worker's machine gone: SIGKILL to the worker's group (vLLM and the trainer die with it)."""
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()


def left_running(data_dirs: list[Path]) -> list[int]:
    """The workers' processes still there: the trainer names its run folder, vLLM's renamed engine
    keeps its worker's HOME (inside the DATA_DIR) in its environment."""
    return sorted({pid for data_dir in data_dirs
                   for pid in [*processes_mentioning(str(data_dir)), *vllm_engine_processes(data_dir)]})


def wait_until_none_left(data_dirs: list[Path], timeout_s: float = 30) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while (left := left_running(data_dirs)) and time.monotonic() < deadline:
        time.sleep(0.5)
    return left


# --- the test --------------------------------------------------------------------------------------
def test_worker_without_the_control_planes_disk_trains_uploads_and_resumes_elsewhere(
        tmp_path, tiny_model_dir, redis_broker):
    first_dir = own_data_dir(tmp_path / "worker-1", tiny_model_dir)
    second_dir = own_data_dir(tmp_path / "worker-2", tiny_model_dir)
    first_log, second_log = tmp_path / "worker-1.log", tmp_path / "worker-2.log"
    plane = ControlPlane(tmp_path / "control-plane")
    logs = [first_log, second_log, plane.server.log_path]
    workers = []
    try:
        content = jsonl(ROWS)
        dataset = plane.upload_dataset(content)
        run_id = plane.create_run(dataset["id"])
        plane.post(f"/api/runs/{run_id}/start/")
        workers.append(start_machine(plane, first_dir, [plane.data_dir, second_dir], first_log))
        plane.wait_for(run_id, lambda r: any(c["in_store"] for c in plane.run(run_id, "checkpoints/")),
                       "a checkpoint uploaded to the control plane", logs)
        # What the launch wrote for the run, and the control plane's database, are not there for the worker.
        assert readable_in(workers[0], first_dir / "models" / MODEL_NAME / "config.json")  # the check works
        assert readable_in(workers[0], first_dir / "cache" / "datasets" / f"{dataset['sha256']}.jsonl")
        assert not readable_in(workers[0], plane.dataset_file(dataset["id"]))
        assert not readable_in(workers[0], plane.data_dir / "runs" / str(run_id) / ".control-plane-disk")
        assert not readable_in(workers[0], plane.data_dir / "db.sqlite3")
        kill_worker(workers[0])
        lost = plane.wait_for(run_id, lambda r: r["status"] in ("lost", "succeeded"), "lost", logs, timeout_s=90)
        assert lost["status"] == "lost", f"the run ended before its worker was killed: raise MAX_STEPS ({MAX_STEPS})"

        # Listed on the run page once uploaded whole; its download is what the worker wrote, byte for byte.
        listed = plane.run_page_checkpoints(run_id)
        assert listed and all(c["in_store"] for c in listed)
        newest = max(listed, key=lambda c: c["step"])
        written = Path(newest["path"])
        assert written.is_relative_to(first_dir / "runs" / str(run_id)), written  # on the worker's own disk
        download = plane.browser.get(newest["download"])
        assert download.status_code == 200, download.text
        assert files_in_tar(download.content) == files_under(written)
        first_steps = trained_steps(first_dir / "runs" / str(run_id), attempt=1)
        assert (first_dir / "cache" / "datasets" / f"{dataset['sha256']}.jsonl").read_bytes() == content

        # A second machine, which never saw the run; the first one's disk is gone from its view.
        workers.append(start_machine(plane, second_dir, [plane.data_dir, first_dir], second_log))
        plane.post(f"/api/runs/{run_id}/resume/")
        finished = plane.wait_for(run_id, lambda r: r["status"] in ("succeeded", "failed"), "the end", logs)
        assert finished["status"] == "succeeded", finished["error_message"]
        assert finished["current_step"] == MAX_STEPS

        said = messages_by_attempt(plane.logs(run_id), run_id)
        assert any("dataset fetched from the control plane" in m for m in said[1])
        assert any("dataset fetched from the control plane" in m for m in said[2])
        second_run_dir = second_dir / "runs" / str(run_id)
        fetched_into = second_run_dir / "checkpoints" / written.name
        assert any(f"checkpoint to resume from fetched from the control plane into {fetched_into}" in m
                   for m in said[2])
        assert any(f"resumed from {fetched_into} at step {newest['step']}" in m for m in said[2])
        assert files_under(fetched_into) == files_under(written)
        # Steps continue: up to the resumed checkpoint each was trained once, by the first worker.
        assert first_steps[:newest["step"]] == list(range(1, newest["step"] + 1))
        assert trained_steps(second_run_dir, attempt=2) == list(range(newest["step"] + 1, MAX_STEPS + 1))
        steps = plane.run(run_id, "metrics/?names=train/loss")["series"]["train/loss"]["step"]
        assert steps == list(range(1, MAX_STEPS + 1))
        checkpoints = plane.run(run_id, "checkpoints/")
        assert all(c["in_store"] for c in checkpoints) and max(c["step"] for c in checkpoints) == MAX_STEPS
        # Of the run's folder on the control plane's disk, the workers wrote nothing: only the launch's marker.
        assert [p.name for p in (plane.data_dir / "runs" / str(run_id)).iterdir()] == [".control-plane-disk"]
    finally:
        for worker in workers:
            stop_worker(worker)
        plane.close()
    assert wait_until_none_left([first_dir, second_dir]) == []
