"""Ingest throughput and live-delivery latency of the real control plane.

Not a test: it starts the product (migrate + uvicorn, see tests/support/asgi_server.py),
drives it over real HTTP and websockets, and prints tables. It asserts nothing.

    .venv/bin/python -m bench.ingest            # full run, about 2 minutes
    .venv/bin/python -m bench.ingest --quick    # about a minute
    .venv/bin/python -m bench.ingest --smoke    # SQLite alone, 0.5 s a shape, 1 s of latency (bench/smoke.py)

What it measures (see bench/README.md for the reasoning behind each number):

1. Throughput: metric values stored per second through `POST /api/runs/<id>/events/`,
   one sequential reporter per run (as the trainer's IngestClient does), for several batch
   shapes, plus 4 concurrent reporters on 4 runs. On SQLite + in-memory channel layer and
   on PostgreSQL + channels_redis (a throwaway database `grpo_bench_<pid>`, dropped at the end).
2. Latency: 20 logged-in websocket clients on one run while a reporter posts at a steady
   rate; each client records (receive time - the time the reporter started the POST).
   The start time travels in the metrics event's `time` field; everything runs on this
   machine, so both ends read the same clock (time.time()).
"""
import argparse
import asyncio
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import psutil
import websockets

from bench.report import percentile, print_table
from bench.smoke import add_smoke_options
from tests.support.asgi_server import AsgiServer, logged_in_client


THROUGHPUT_TARGET = {"sqlite": 5_000, "postgresql": 10_000}
LATENCY_TARGET_MS = 100.0
VALUES_PER_EVENT = 30
SHAPES = [(1, 30), (50, 30), (200, 30)]  # (events per POST, values per event)
CONCURRENT = 4
CONCURRENT_SHAPE = (50, 30)
WS_CLIENTS = 20
LATENCY_POSTS_PER_S = 20
LATENCY_VALUES_PER_POST = 100  # 20 POSTs/s x 1 metrics event of 100 values = 2,000 values/s

# Names a GRPO trainer actually reports, padded to whatever count a shape asks for.
BASE_NAMES = [
    "train/loss", "train/grad_norm", "train/learning_rate", "train/kl", "train/entropy",
    "train/clip_ratio/low_mean", "train/clip_ratio/high_mean", "train/clip_ratio/region_mean",
    "train/importance_ratio/mean", "train/importance_ratio/max", "reward/mean", "reward/std",
    "reward/accuracy/mean", "reward/format/mean", "reward/length/mean", "completions/mean_length",
    "completions/max_length", "completions/min_length", "completions/clipped_ratio",
    "rollout/staleness/mean", "rollout/staleness/max", "rollout/dropped_stale", "rollout/queue_size",
    "rollout/tokens_per_s", "rollout/groups_per_s", "weights/version", "weights/sync_seconds",
    "time/step_seconds", "time/rollout_wait_seconds", "memory/max_allocated_gb",
]

SEED_RUNS = """
import json
from django.contrib.auth import get_user_model
from runs.models import Dataset, RewardFunction, Run, RunReward
from worker.trainer.config import TrainingConfig
User = get_user_model()
owner = User.objects.create_user("owner", password="owner-pass-123")
dataset = Dataset.objects.create(owner=owner, name="d", source="generator", generator="arithmetic", row_count=1)
reward = RewardFunction.objects.create(owner=owner, name="acc", kind="builtin", builtin="accuracy")
seeded = []
for index in range(COUNT):
    run = Run.objects.create(owner=owner, name=f"bench-{index}", dataset=dataset, config=TrainingConfig().model_dump())
    RunReward.objects.create(run=run, reward_function=reward)
    run.enqueue()
    token = run.issue_ingest_token()
    run.save()
    seeded.append({"run_id": run.pk, "token": token})
print(json.dumps(seeded))
"""


def metric_names(count: int) -> list[str]:
    names = list(BASE_NAMES[:count])
    names += [f"custom/metric_{index:03d}" for index in range(count - len(names))]
    return names


# --- a run's reporter ----------------------------------------------------------


class Reporter:
    """One run's sender: increasing seq and step, like worker/trainer's IngestClient."""

    def __init__(self, server: AsgiServer, run: dict, source: str = "trainer"):
        self.run_id = run["run_id"]
        self.url = f"{server.url}/api/runs/{run['run_id']}/events/"
        self.headers = {"Authorization": f"Bearer {run['token']}", "Content-Type": "application/json"}
        self.source = source
        self.seq = 0
        self.step = 0
        self.stored_values = 0  # what the control plane said it kept, checked against the database at the end
        self.rng = random.Random(run["run_id"])

    def body(self, events: int, values: int, sent_at: float | None = None) -> bytes:
        names = metric_names(values)
        batch = []
        for _ in range(events):
            self.seq += 1
            self.step += 1
            batch.append({"seq": self.seq, "type": "metrics", "step": self.step,
                          "time": sent_at if sent_at is not None else time.time(),
                          "values": {name: self.rng.random() for name in names}})
        return json.dumps({"source": self.source, "events": batch}).encode()

    def status_body(self, *statuses: str) -> bytes:
        batch = []
        for status in statuses:
            self.seq += 1
            batch.append({"seq": self.seq, "type": "status", "status": status})
        return json.dumps({"source": self.source, "events": batch}).encode()


def check(response: httpx.Response, expect_stored: int) -> None:
    if response.status_code != 200:
        raise RuntimeError(f"ingest answered HTTP {response.status_code}: {response.text[:300]}")
    stored = response.json()["stored"]
    if stored != expect_stored:
        raise RuntimeError(f"ingest stored {stored} of {expect_stored} events")


def accepted(response: httpx.Response, expect_stored: int, errors: dict) -> bool:
    """Counts a refused POST instead of stopping: the table shows how often it happened."""
    if response.status_code == 200 and response.json()["stored"] == expect_stored:
        return True
    key = f"HTTP {response.status_code}"
    errors[key] = errors.get(key, 0) + 1
    return False


def start_run(server: AsgiServer, reporter: Reporter) -> None:
    with httpx.Client(timeout=30) as client:
        check(client.post(reporter.url, content=reporter.status_body("starting", "running"),
                          headers=reporter.headers), 2)


# --- measurement 1: throughput ---------------------------------------------------


class CpuMeter:
    """CPU seconds the server process used over an interval, as a share of one core."""

    def __init__(self, pid: int):
        self.process = psutil.Process(pid)

    def __enter__(self):
        self.cpu0, self.wall0 = self._cpu(), time.monotonic()
        return self

    def __exit__(self, *exc):
        self.seconds = self._cpu() - self.cpu0
        self.share = self.seconds / max(time.monotonic() - self.wall0, 1e-9)

    def _cpu(self) -> float:
        times = self.process.cpu_times()
        return times.user + times.system


def send_for(reporter: Reporter, shape: tuple[int, int], seconds: float, barrier=None) -> dict:
    events, values = shape
    errors = {}
    with httpx.Client(timeout=60) as client:
        for _ in range(5):  # warm-up, not timed (a refused one is counted and tried again)
            if accepted(client.post(reporter.url, content=reporter.body(events, values), headers=reporter.headers),
                        events, errors):
                reporter.stored_values += events * values
                break
        if barrier is not None:
            barrier.wait(timeout=60)
        requests, stored, latencies = 0, 0, []
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            body = reporter.body(events, values)
            sent = time.perf_counter()
            stored += accepted(client.post(reporter.url, content=body, headers=reporter.headers), events, errors)
            latencies.append(time.perf_counter() - sent)
            requests += 1
        elapsed = time.perf_counter() - start
    reporter.stored_values += stored * events * values
    return {"requests": requests, "values": stored * events * values, "seconds": elapsed,
            "latencies": latencies, "errors": errors}


def throughput(server: AsgiServer, reporters: list[Reporter], backend: str, layer: str, seconds: float) -> list[dict]:
    rows = []
    for reporter in reporters:
        start_run(server, reporter)
    for shape in SHAPES:
        with CpuMeter(server.process.pid) as cpu:
            result = send_for(reporters[0], shape, seconds)
        rows.append(_throughput_row(backend, layer, shape, 1, [result], cpu.share))

    barrier = threading.Barrier(CONCURRENT + 1)
    results: list = [None] * CONCURRENT

    def one(index):
        try:
            results[index] = send_for(reporters[index], CONCURRENT_SHAPE, seconds, barrier)
        except BaseException as exc:  # noqa: BLE001 - reported below, after the other senders stop
            barrier.abort()
            results[index] = exc

    threads = [threading.Thread(target=one, args=(index,)) for index in range(CONCURRENT)]
    for thread in threads:
        thread.start()
    try:
        barrier.wait(timeout=60)
    except threading.BrokenBarrierError:
        pass
    with CpuMeter(server.process.pid) as cpu:
        for thread in threads:
            thread.join()
    for result in results:
        if isinstance(result, BaseException):
            raise result
    rows.append(_throughput_row(backend, layer, CONCURRENT_SHAPE, CONCURRENT, results, cpu.share))
    return rows


def _throughput_row(backend, layer, shape, senders, results, cpu_share) -> dict:
    requests = sum(r["requests"] for r in results)
    values = sum(r["values"] for r in results)
    seconds = max(r["seconds"] for r in results)
    latencies = sorted(x for r in results for x in r["latencies"])
    errors = {}
    for r in results:
        for key, count in r["errors"].items():
            errors[key] = errors.get(key, 0) + count
    rate = values / seconds
    target = THROUGHPUT_TARGET[backend.split()[0]]
    return {
        "backend": backend, "layer": layer, "senders": senders,
        "batch": f"{shape[0]} x {shape[1]}", "requests": requests,
        "refused": ", ".join(f"{n} x {k}" for k, n in sorted(errors.items())) or "0", "values stored": values,
        "seconds": f"{seconds:.1f}", "req/s": f"{requests / seconds:.1f}",
        "POST p50 ms": f"{percentile(latencies, 50) * 1000:.1f}",
        "values/s": f"{rate:,.0f}", "server cpu": f"{cpu_share:.0%}",
        "values/server-cpu-s": f"{values / max(cpu_share * seconds, 1e-9):,.0f}",
        "target": f">= {target:,}", "met?": "yes" if rate >= target and not errors else "NO",
    }


# --- measurement 2: latency ---------------------------------------------------------


def ws_url(server: AsgiServer, run: dict) -> str:
    return server.url.replace("http", "ws", 1) + f"/ws/runs/{run['run_id']}/"


async def latency(server: AsgiServer, reporter: Reporter, backend: str, layer: str, seconds: float) -> dict:
    run = {"run_id": reporter.run_id}
    logins = [logged_in_client(server, "owner", "owner-pass-123") for _ in range(WS_CLIENTS)]
    headers = [{"Cookie": "; ".join(f"{k}={v}" for k, v in c.cookies.items()), "Origin": "http://127.0.0.1"}
               for c in logins]
    for client in logins:
        client.close()
    sockets = [await websockets.connect(ws_url(server, run), additional_headers=h, max_size=None) for h in headers]
    for socket in sockets:
        hello = json.loads(await asyncio.wait_for(socket.recv(), 10))
        if hello["type"] != "run.hello":
            raise RuntimeError(f"expected run.hello, got {hello['type']}")

    measuring = {"since": float("inf")}
    delays: list[float] = []
    received = [0] * WS_CLIENTS

    async def receive(index, socket):
        try:
            async for raw in socket:
                now = time.time()
                message = json.loads(raw)
                if message["type"] != "run.metrics":
                    continue
                for point in message["payload"]["points"]:
                    if point["time"] >= measuring["since"]:
                        delays.append(now - point["time"])
                        received[index] += 1
        except websockets.ConnectionClosed:
            pass

    receivers = [asyncio.create_task(receive(i, s)) for i, s in enumerate(sockets)]
    interval = 1.0 / LATENCY_POSTS_PER_S
    posts, late_posts, post_times = 0, 0, []
    async with httpx.AsyncClient(timeout=30) as client:
        # Warm-up: a few posts that are not counted (first-use imports, connection setup).
        for _ in range(5):
            check(await client.post(reporter.url, content=reporter.body(1, LATENCY_VALUES_PER_POST),
                                    headers=reporter.headers), 1)
            reporter.stored_values += LATENCY_VALUES_PER_POST
        await asyncio.sleep(0.5)
        with CpuMeter(server.process.pid) as cpu:
            start = time.perf_counter()
            measuring["since"] = time.time()
            count = int(seconds * LATENCY_POSTS_PER_S)
            for index in range(count):
                wait = start + index * interval - time.perf_counter()
                if wait > 0:
                    await asyncio.sleep(wait)
                else:
                    late_posts += 1
                sent_at = time.time()
                body = reporter.body(1, LATENCY_VALUES_PER_POST, sent_at=sent_at)
                check(await client.post(reporter.url, content=body, headers=reporter.headers), 1)
                reporter.stored_values += LATENCY_VALUES_PER_POST
                post_times.append(time.time() - sent_at)
                posts += 1
            elapsed = time.perf_counter() - start
            await asyncio.sleep(1.0)  # stragglers
    for socket in sockets:
        await socket.close()
    await asyncio.gather(*receivers)

    delays.sort()
    post_times.sort()
    expected = posts * WS_CLIENTS
    p99 = percentile(delays, 99) * 1000 if delays else float("nan")
    rate = posts * LATENCY_VALUES_PER_POST / elapsed
    return {
        "layer": layer, "db": backend, "clients": WS_CLIENTS,
        "rate": f"{posts / elapsed:.1f} POST/s x {LATENCY_VALUES_PER_POST} = {rate:,.0f} values/s",
        "seconds": f"{elapsed:.1f}", "received": f"{len(delays)}/{expected}",
        "POST p50 ms": f"{percentile(post_times, 50) * 1000:.1f}",
        "p50 ms": f"{percentile(delays, 50) * 1000:.1f}", "p99 ms": f"{p99:.1f}",
        "max ms": f"{delays[-1] * 1000:.1f}" if delays else "-", "server cpu": f"{cpu.share:.0%}",
        "server cpu ms/POST": f"{cpu.seconds / posts * 1000:.1f}",
        "target": f"p99 <= {LATENCY_TARGET_MS:.0f}",
        "met?": "yes" if p99 <= LATENCY_TARGET_MS and len(delays) == expected else "NO",
    }


# --- plumbing ---------------------------------------------------------------------------


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


class PostgresDatabase:
    """A throwaway database on the PostgreSQL server, dropped however the benchmark ends."""

    def __init__(self, admin_url: str):
        import psycopg

        self.psycopg = psycopg
        self.admin_url = admin_url
        self.name = f"grpo_bench_{os.getpid()}"

    def __enter__(self) -> str:
        with self.psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}"')
            conn.execute(f'CREATE DATABASE "{self.name}"')
        info = self.psycopg.conninfo.conninfo_to_dict(self.admin_url)
        user, host, port = info.get("user", "postgres"), info.get("host", "127.0.0.1"), info.get("port", 5432)
        password = f":{info['password']}" if info.get("password") else ""
        return f"postgres://{user}{password}@{host}:{port}/{self.name}"

    def __exit__(self, *exc):
        with self.psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


def postgres_problem(admin_url: str) -> str:
    try:
        import psycopg

        psycopg.connect(admin_url, connect_timeout=3).close()
    except Exception as exc:  # noqa: BLE001 - any reason means "not here"
        return f"cannot reach PostgreSQL at {admin_url}: {str(exc).strip().splitlines()[0]}"
    return ""


def redis_problem(url: str) -> str:
    try:
        import redis

        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except Exception as exc:  # noqa: BLE001
        return str(exc)
    return ""


def clear_redis(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    for key in client.scan_iter("asgi*"):
        client.delete(key)
    client.close()


def run_backend(backend: str, layer: str, env: dict, args, throughput_rows: list, latency_rows: list) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix=f"grpo-bench-{backend.split()[0]}-"))
    try:
        print(f"\n[{backend} + {layer}] starting the server (migrate + uvicorn) ...", flush=True)
        with AsgiServer(data_dir, env=env) as server:
            runs = json.loads(server.manage("shell", "-c", SEED_RUNS.replace("COUNT", str(CONCURRENT + 1)))
                              .strip().splitlines()[-1])
            reporters = [Reporter(server, run) for run in runs[:CONCURRENT]]
            reporters.append(Reporter(server, runs[CONCURRENT], source="latency"))
            start_run(server, reporters[CONCURRENT])
            if not args.skip_throughput:
                print(f"[{backend} + {layer}] throughput, {args.seconds:.0f} s per shape ...", flush=True)
                throughput_rows += throughput(server, reporters[:CONCURRENT], backend, layer, args.seconds)
            if not args.skip_latency:
                print(f"[{backend} + {layer}] latency, {WS_CLIENTS} websocket clients, "
                      f"{args.latency_seconds:.0f} s ...", flush=True)
                latency_rows.append(asyncio.run(latency(server, reporters[CONCURRENT], backend, layer,
                                                        args.latency_seconds)))
            in_database = server.shell_json(
                "import json; from runs.models import MetricPoint; print(json.dumps(MetricPoint.objects.count()))")
            expected = sum(r.stored_values for r in reporters)
            print(f"[{backend} + {layer}] database check: {in_database:,} metric rows stored, {expected:,} acknowledged"
                  f"{'' if in_database == expected else '  <-- MISMATCH'}", flush=True)
    except Exception:
        log = data_dir / "server.log"
        if log.exists():
            print(f"--- server log tail ---\n{log.read_text()[-3000:]}", file=sys.stderr)
        raise
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="short run (2 s per shape, 5 s of latency)")
    parser.add_argument("--seconds", type=float, help="seconds per throughput measurement (default 8, quick 2)")
    parser.add_argument("--latency-seconds", type=float, help="seconds of steady sending (default 15, quick 5)")
    parser.add_argument("--pg-admin-url", default=os.environ.get("BENCH_PG_ADMIN_URL",
                                                                 "postgresql://postgres@127.0.0.1:5432/postgres"),
                        help="where to create (and drop) the throwaway database")
    parser.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/11"),
                        help="channels_redis layer for the PostgreSQL configuration (a database index of its own)")
    parser.add_argument("--only", choices=["sqlite", "postgresql"], help="measure one configuration")
    parser.add_argument("--sqlite-url", action="store_true",
                        help="also measure throughput with SQLite given as DATABASE_URL=sqlite:///... (AsgiServer's default)")
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--skip-latency", action="store_true")
    add_smoke_options(parser)
    args = parser.parse_args(argv)
    args.seconds = args.seconds or (0.5 if args.smoke else 2.0 if args.quick else 8.0)
    args.latency_seconds = args.latency_seconds or (1.0 if args.smoke else 5.0 if args.quick else 15.0)
    args.only = args.only or ("sqlite" if args.smoke else None)

    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}; one uvicorn process per configuration; "
          f"load average before: {load_average()}")
    began = time.monotonic()
    throughput_rows, latency_rows = [], []
    if args.only in (None, "sqlite"):
        # DATABASE_URL unset: the embedded default (WAL, IMMEDIATE transactions, 20 s busy timeout).
        run_backend("sqlite", "in-memory", {"DATABASE_URL": ""}, args, throughput_rows, latency_rows)
    if args.sqlite_url:
        # What AsgiServer does unless told otherwise: DATABASE_URL=sqlite:///..., parsed by dj_database_url,
        # which drops the OPTIONS above (no WAL, no IMMEDIATE, 5 s busy timeout).
        run_backend("sqlite (DATABASE_URL)", "in-memory", {}, argparse.Namespace(**{**vars(args), "skip_latency": True}),
                    throughput_rows, latency_rows)
    if args.only in (None, "postgresql"):
        problem = postgres_problem(args.pg_admin_url)
        if problem:
            print(f"\n[postgresql] skipped: {problem}")
        else:
            layer, env = "redis", {"REDIS_URL": args.redis_url}
            if redis_problem(args.redis_url):
                print(f"\n[postgresql] no Redis at {args.redis_url} ({redis_problem(args.redis_url)}): "
                      "using the in-memory channel layer")
                layer, env = "in-memory", {"REDIS_URL": ""}
            with PostgresDatabase(args.pg_admin_url) as database_url:
                try:
                    run_backend("postgresql", layer, {"DATABASE_URL": database_url, **env},
                                args, throughput_rows, latency_rows)
                finally:
                    if layer == "redis":
                        clear_redis(args.redis_url)

    print_table(f"Ingest throughput (metrics events of {VALUES_PER_EVENT} values; batch = events x values per POST; "
                f"each sender is one sequential reporter on its own run)", throughput_rows)
    print_table(f"Ingest -> websocket latency ({WS_CLIENTS} owner sessions on one run; delay = receive time - time "
                f"the POST started)", latency_rows)
    print(f"\ntotal {time.monotonic() - began:.0f} s; load average after: {load_average()} "
          f"(other work on this machine takes CPU from the server: compare 'values/server-cpu-s' across runs)")


if __name__ == "__main__":
    main()
