"""A real control plane in a subprocess: migrated database, uvicorn, a free port.

Used by tests and benchmarks that need the product as a browser or a worker
sees it (real HTTP, real websockets, a channel layer of their choosing).
"""
import fcntl
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import django
import httpx

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "var" / "test-cache"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class AsgiServer:
    def __init__(self, data_dir: Path, env: dict | None = None):
        self.own_database = data_dir / "db.sqlite3"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = data_dir / "server.log"
        self.env = {
            **os.environ, "DATA_DIR": str(data_dir), "DEBUG": "0", "PUBLIC_URL": self.url,
            # Each server gets its own SQLite file unless the caller names a database.
            "DATABASE_URL": f"sqlite:///{self.own_database}", "REDIS_URL": "", "CELERY_BROKER_URL": "",
            **(env or {}),
        }
        self.process = None
        self.migrated = False

    def manage(self, *args: str, stdin: str | None = None) -> str:
        result = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, input=stdin,
                                capture_output=True, text=True, timeout=120)
        if result.returncode:
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{result.stderr[-3000:]}")
        return result.stdout

    def shell_json(self, code: str) -> dict:
        """Runs Django code in the server's database; the code prints one JSON line last."""
        return json.loads(self.manage("shell", "-c", code).strip().splitlines()[-1])

    def migrate(self) -> None:
        """A server on its own new SQLite file starts from a copy of one migrated once per
        migration set: migrating costs seconds of CPU, and tests start dozens of servers."""
        if self.env["DATABASE_URL"] == f"sqlite:///{self.own_database}" and not self.own_database.exists():
            shutil.copyfile(migrated_sqlite_template(), self.own_database)
        else:
            self.manage("migrate", "--noinput")
        self.migrated = True

    def start(self, timeout_s: float = 60.0) -> "AsgiServer":
        if not self.migrated:  # a server stopped and started again keeps its database
            self.migrate()
        self._log = self.log_path.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "controlplane.asgi:application", "--host", "127.0.0.1",
             "--port", str(self.port), "--ws", "websockets", "--lifespan", "off", "--log-level", "warning"],
            cwd=ROOT, env=self.env, stdout=self._log, stderr=subprocess.STDOUT,
        )
        self._wait_until_up(timeout_s)
        return self

    def _wait_until_up(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                tail = self.log_path.read_text()[-3000:]
                raise RuntimeError(f"server exited with {self.process.returncode}:\n{tail}")
            try:
                if httpx.get(self.url + "/login/", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise TimeoutError(f"server did not answer within {timeout_s} s:\n{self.log_path.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process:
            self._log.close()

    def __enter__(self):
        # A server already started (tests/support/two_users.start) is entered as it is: starting it
        # again would leave the first uvicorn running, unstopped, after the test.
        if self.process is not None and self.process.poll() is None:
            return self
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def migrated_sqlite_template() -> Path:
    """An SQLite file migrated to the tree's migrations, made once by whichever process asks
    first (the embedded and services passes run side by side) and kept until they change."""
    template = TEMPLATES / f"migrated-{migrations_digest()}.sqlite3"
    if template.exists():
        return template
    TEMPLATES.mkdir(parents=True, exist_ok=True)
    with (TEMPLATES / "migrated.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not template.exists():
            building = template.with_suffix(f".{os.getpid()}.tmp")
            building.unlink(missing_ok=True)
            env = {**os.environ, "DATABASE_URL": f"sqlite:///{building}", "REDIS_URL": "", "CELERY_BROKER_URL": ""}
            subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env, check=True,
                           capture_output=True, timeout=300)
            building.rename(template)
    return template


def migrations_digest() -> str:
    """What decides the migrated schema: the project's migrations, Django's and the pinned packages."""
    digest = hashlib.sha256(django.get_version().encode())
    for path in sorted(ROOT.glob("*/migrations/*.py")) + [ROOT / "requirements.txt"]:
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def logged_in_client(server: AsgiServer, username: str, password: str) -> httpx.Client:
    """An HTTP client holding a session cookie, as a browser would after the login page."""
    client = httpx.Client(base_url=server.url, timeout=10)
    client.get("/login/")
    response = client.post("/login/", data={"username": username, "password": password,
                                            "csrfmiddlewaretoken": client.cookies["csrftoken"]})
    if "sessionid" not in client.cookies:
        raise RuntimeError(f"login as {username} failed ({response.status_code})")
    return client


SEED_RUN = """
import json
from django.contrib.auth import get_user_model
from runs.models import Dataset, RewardFunction, Run, RunReward
from worker.trainer.config import TrainingConfig
User = get_user_model()
owner = User.objects.create_user("owner", password="owner-pass-123")
User.objects.create_user("other", password="other-pass-123")
dataset = Dataset.objects.create(owner=owner, name="d", source="generator", generator="arithmetic", row_count=1)
reward = RewardFunction.objects.create(owner=owner, name="acc", kind="builtin", builtin="accuracy")
run = Run.objects.create(owner=owner, name="live", dataset=dataset, config=TrainingConfig().model_dump())
RunReward.objects.create(run=run, reward_function=reward)
run.enqueue()
token = run.issue_ingest_token()
run.save()
print(json.dumps({"run_id": run.pk, "token": token}))
"""
