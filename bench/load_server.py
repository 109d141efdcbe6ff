"""The control plane bench/load.py measures: `make run`'s processes on a data directory of its own,
on the embedded defaults or on PostgreSQL, Redis and a bucket, and the memory they hold.

`make run` starts uvicorn (several processes where Redis carries the channel layer), a consumer of
the `controlplane` queue and a run worker; the run worker is left out here (no run trains), the
consumer is started because a checkpoint's `complete` and a model-played dry run may hand their
work to it.
"""
import os
import subprocess
import sys
import threading
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from scripts.run_local import server_args
from tests.support.asgi_server import ROOT, AsgiServer
from tests.support.controlplane_consumer import start_consumer, stop_consumer, wait_until_consuming

CONSUMER_CONCURRENCY = 2  # make run's BACKGROUND_CONCURRENCY default: the 2 dry runs play side by side
REDIS_CHANNELS_DB, REDIS_BROKER_DB = 11, 12  # database indexes of their own, emptied at the end


@dataclass
class Configuration:
    name: str
    env: dict
    web_processes: int
    store: str  # where uploaded checkpoints are kept, in words
    cleanups: list = field(default_factory=list)


class LoadServer(AsgiServer):
    """AsgiServer started as make run starts the control plane: its uvicorn command line (with
    --workers past one process) and a consumer of the controlplane queue beside it."""

    def __init__(self, data_dir: Path, env: dict, web_processes: int):
        super().__init__(data_dir, env={**env, "WEB_PROCESSES": str(web_processes)})
        self.web_processes = web_processes
        self.consumer = None

    def start(self, timeout_s: float = 90.0) -> "LoadServer":
        self.manage("migrate", "--noinput")
        self._log = self.log_path.open("w")
        self.process = subprocess.Popen([sys.executable, *server_args("127.0.0.1", self.port, self.web_processes)],
                                        cwd=ROOT, env=self.env, stdout=self._log, stderr=subprocess.STDOUT)
        self._wait_until_up(timeout_s)
        self.consumer = start_consumer(self, concurrency=CONSUMER_CONCURRENCY)
        wait_until_consuming(self.consumer)
        return self

    def stop(self) -> None:
        if self.consumer is not None:
            stop_consumer(self.consumer)
        super().stop()


def tree_rss(process: subprocess.Popen | None) -> int:
    """Resident bytes of a process and all its descendants (0 once it is gone)."""
    if process is None or process.poll() is not None:
        return 0
    try:
        root = psutil.Process(process.pid)
        members = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for member in members:
        try:
            total += member.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


class MemoryWatch:
    """Samples the web processes' and the consumer's RSS in a thread; marks split the samples into
    before, during and after the load."""

    def __init__(self, server: LoadServer, every_s: float = 0.25):
        self.server, self.every_s = server, every_s
        self.samples: list[tuple[float, int, int]] = []  # (time, web bytes, consumer bytes)
        self.marks: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="rss", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def mark(self, name: str) -> None:
        self.marks[name] = time.monotonic()

    def _sample(self) -> None:
        while not self._stop.wait(self.every_s):
            self.samples.append((time.monotonic(), tree_rss(self.server.process), tree_rss(getattr(self.server, "consumer", None))))

    def between(self, start: str, end: str | None, column: int) -> list[int]:
        since, until = self.marks[start], self.marks.get(end, float("inf")) if end else float("inf")
        return [sample[column] for sample in self.samples if since <= sample[0] <= until]


def redis_url(base: str, index: int) -> str:
    """`redis://host:port` with a database index of its own."""
    return f"{base.rstrip('/')}/{index}"


def empty_redis(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    for key in client.scan_iter("*"):
        client.delete(key)
    client.close()


@contextmanager
def embedded() -> Configuration:
    """The defaults: SQLite, the in-memory channel layer (one web process), the filesystem broker and store."""
    yield Configuration("embedded defaults (SQLite, in-memory layer, filesystem broker and store)",
                        {"DATABASE_URL": "", "REDIS_URL": "", "CELERY_BROKER_URL": "", "ARTIFACT_STORE_URL": ""},
                        web_processes=1, store="filesystem")


@contextmanager
def production(pg_admin_url: str, redis_base: str, web_processes: int, work: Path) -> Configuration:
    """PostgreSQL (a throwaway database), channels_redis and a Redis broker, a bucket on moto_server."""
    from bench.ingest import PostgresDatabase
    from tests.support.s3_server import CREDENTIALS, S3Server

    channels, broker = redis_url(redis_base, REDIS_CHANNELS_DB), redis_url(redis_base, REDIS_BROKER_DB)
    with ExitStack() as stack:
        database_url = stack.enter_context(PostgresDatabase(pg_admin_url))
        s3 = S3Server(work).start()
        stack.callback(s3.stop)
        for url in (channels, broker):
            stack.callback(empty_redis, url)
        bucket = s3.new_bucket()
        yield Configuration(
            f"PostgreSQL, Redis (channel layer and broker), a bucket on moto_server, {web_processes} web processes",
            {"DATABASE_URL": database_url, "REDIS_URL": channels, "CELERY_BROKER_URL": broker,
             "ARTIFACT_STORE_URL": f"s3://{bucket}/bench", "ARTIFACT_STORE_ENDPOINT_URL": s3.url, **CREDENTIALS},
            web_processes=web_processes, store="bucket (moto_server)")


def problems_with_services(pg_admin_url: str, redis_base: str) -> str:
    """Why the production configuration cannot be measured here; empty when it can."""
    from bench.ingest import postgres_problem, redis_problem

    if problem := postgres_problem(pg_admin_url):
        return problem
    if problem := redis_problem(redis_base):
        return f"no Redis at {redis_base}: {problem}"
    return ""


def default_web_processes() -> int:
    """What make run starts with Redis, unless WEB_PROCESSES says otherwise."""
    return int(os.environ.get("WEB_PROCESSES") or min(4, os.cpu_count() or 1))
