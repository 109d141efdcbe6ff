"""Comparing 8 runs of 100,000 points per metric: the compare API's answer time and the
compare page's ready time in Chromium, each beside a peer measured in the same run.

Not a test: it starts the product (migrate + uvicorn, see tests/support/asgi_server.py),
seeds runs straight into its database, drives it over real HTTP and a real browser, and
prints a table. It asserts nothing.

    .venv/bin/python -m bench.compare                 # SQLite, then PostgreSQL (about 4 minutes)
    .venv/bin/python -m bench.compare --only sqlite --points-per-metric 20000
    .venv/bin/python -m bench.compare --skip-page --skip-peers   # the API rows alone
    .venv/bin/python -m bench.compare --smoke         # SQLite, runs of 1,000 points, each row once

Peers (see bench/README.md):
- the same comparison through the per-run endpoint GET /api/runs/<id>/metrics/ (8 requests,
  runs/telemetry/metrics_query.py's database-side bucket means), which is what a page without the
  compare API would call;
- the naive approach: every point of every run and metric loaded through the ORM and
  bucketed in Python, timed inside one Django process (no HTTP, so the peer is flattered);
- for the page: the same page over 8 runs of 1,000 points, to show what the size costs.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.ingest import PostgresDatabase, load_average, postgres_problem
from bench.report import print_table
from bench.smoke import add_smoke_options
from tests.support.asgi_server import AsgiServer, logged_in_client
from worker.trainer.metric_names import (ROLLOUT_COMPLETION_LENGTH_MEAN, ROLLOUT_REWARD_MEAN,
                                         SYSTEM_GENERATION_TOKENS_PER_S, TRAIN_KL_TO_SAMPLER, TRAIN_LOSS)

ROOT = Path(__file__).resolve().parents[1]


API_TARGET_MS = 300.0
PAGE_TARGET_MS = 1500.0
RUNS = 8
SMALL_POINTS = 1_000
# What the compare page asks for by default (runs/compare/comparison.py), plus the summary's throughput.
METRICS = [ROLLOUT_REWARD_MEAN, TRAIN_LOSS, ROLLOUT_COMPLETION_LENGTH_MEAN, TRAIN_KL_TO_SAMPLER,
           SYSTEM_GENERATION_TOKENS_PER_S]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")

SEED = """
import datetime, json, math, random, time
from django.contrib.auth import get_user_model
from django.db import connection
from runs.telemetry.metric_rows import database_time, insert_metric_rows
from runs.models import Dataset, MetricPoint, RewardFunction, Run, RunReward, Sample
from worker.trainer.config import TrainingConfig
User = get_user_model()
owner, _ = User.objects.get_or_create(username="owner")
owner.set_password("owner-pass-123"); owner.save()
dataset, _ = Dataset.objects.get_or_create(owner=owner, name="gsm8k", source="hub", hub_id="openai/gsm8k")
reward, _ = RewardFunction.objects.get_or_create(owner=owner, name="acc", kind="builtin", builtin="accuracy")
t0 = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)
started = time.perf_counter()
# Every run and metric logs at the same moments: adapt each moment to the database once.
times = [database_time(t0 + datetime.timedelta(seconds=2 * step)) for step in range(POINTS + 1)]
ids = []
# Loading without the (run, name, step) index and building it afterwards is several times
# faster than keeping it up to date row by row; the schema ends up the same.
index_of_points = MetricPoint._meta.indexes[0]
with connection.schema_editor() as editor:
    editor.remove_index(MetricPoint, index_of_points)
for index in range(RUNS):
    config = TrainingConfig(learning_rate=1e-6 * (index + 1), max_steps=POINTS).model_dump()
    run = Run.objects.create(owner=owner, name=f"PREFIX-{index}", dataset=dataset, config=config,
                             status="succeeded", current_step=POINTS, started_at=t0,
                             finished_at=t0 + datetime.timedelta(seconds=2 * POINTS))
    RunReward.objects.create(run=run, reward_function=reward, weight=1.0)
    rng = random.Random(index)
    for name in METRICS:
        insert_metric_rows([(run.pk, name, step, math.tanh(step / POINTS * (index + 1)) + rng.gauss(0, 0.1), times[step], 1)
                            for step in range(1, POINTS + 1)])
    Sample.objects.bulk_create([Sample(run=run, step=POINTS, group=0, prompt="What is 12 * 7?",
                                       completion=f"run {index}: 84", total_reward=1.0) for _ in range(8)])
    ids.append(run.pk)
with connection.schema_editor() as editor:
    editor.add_index(MetricPoint, index_of_points)
if connection.vendor == "postgresql":
    with connection.cursor() as cursor:
        # What autovacuum does soon after a bulk load (since PostgreSQL 13 inserts trigger a
        # vacuum too): statistics, and the visibility map that index-only scans rely on.
        cursor.execute("VACUUM ANALYZE")
print(json.dumps({"ids": ids, "seconds": time.perf_counter() - started}))
"""

NAIVE = """
import json, time
from runs.models import MetricPoint
ids, names, points = IDS, METRICS, 500
timings = []
for _ in range(REPEATS):
    started = time.perf_counter()
    answer = {}
    for name in names:
        for run_id in ids:
            rows = list(MetricPoint.objects.filter(run_id=run_id, name=name).order_by("step").values_list("step", "value"))
            width = max(1, -(-len(rows) // points))
            answer[run_id, name] = [sum(v for _, v in rows[i:i + width]) / len(rows[i:i + width])
                                    for i in range(0, len(rows), width)]
    timings.append((time.perf_counter() - started) * 1000)
print(json.dumps({"ms": timings, "rows": sum(len(v) for v in answer.values())}))
"""


def shell_json(server: AsgiServer, code: str) -> dict:
    """Like AsgiServer.shell_json, without its 2-minute limit: seeding 4 million rows takes longer."""
    result = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=server.env,
                            capture_output=True, text=True, timeout=3600)
    if result.returncode:
        raise RuntimeError(f"manage.py shell failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def seed(server: AsgiServer, prefix: str, points: int) -> dict:
    code = (SEED.replace("RUNS", str(RUNS)).replace("POINTS", str(points)).replace("PREFIX", prefix)
            .replace("METRICS", json.dumps(METRICS)))
    return shell_json(server, code)


def timed_get(client, url: str, params: dict, repeats: int) -> list[float]:
    client.get(url, params=params).raise_for_status()  # warm-up: connections, caches, imports
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        response = client.get(url, params=params)
        timings.append((time.perf_counter() - started) * 1000)
        response.raise_for_status()
    return timings


def per_run_endpoint(client, ids: list[int], repeats: int) -> list[float]:
    """The peer over HTTP: one /api/runs/<id>/metrics/ request per run, in sequence."""
    params = {"names": ",".join(METRICS), "max_points": 500}
    for run_id in ids:
        client.get(f"/api/runs/{run_id}/metrics/", params=params).raise_for_status()
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        for run_id in ids:
            client.get(f"/api/runs/{run_id}/metrics/", params=params).raise_for_status()
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def page_ready_ms(server: AsgiServer, ids: list[int], repeats: int) -> list[float]:
    """Navigation start to the page's 'grpo:compare-ready' mark (charts, summary and diff drawn)."""
    from playwright.sync_api import sync_playwright

    url = f"{server.url}/compare/?runs={','.join(map(str, ids))}"
    timings = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1366, "height": 800})
        page = context.new_page()
        page.goto(server.url + "/login/")
        page.fill("input[name=username]", "owner")
        page.fill("input[name=password]", "owner-pass-123")
        page.click("button[type=submit]")
        page.wait_for_url(server.url + "/")
        for attempt in range(repeats + 1):  # the first visit fills the static-file cache; not counted
            page.goto(url)
            page.wait_for_selector("#compare[data-state=ready]", timeout=60_000)
            ready = page.evaluate("performance.getEntriesByName('grpo:compare-ready')[0].startTime")
            if attempt:
                timings.append(ready)
        browser.close()
    return timings


def row(database: str, what: str, points: int, timings: list[float], target: float | None, peer: float | None) -> dict:
    p50 = statistics.median(timings)
    # Also printed as measured, so that a run cut short still shows what it got.
    print(f"[{database}] {what}, {points:,} points: p50 {p50:.0f} ms, max {max(timings):.0f} ms", flush=True)
    return {
        "database": database, "measured": what, "points/run/metric": f"{points:,}",
        "p50 ms": f"{p50:.0f}", "max ms": f"{max(timings):.0f}",
        "target ms": f"≤{target:.0f}" if target else "",
        "met": ("yes" if p50 <= target else "NO") if target else "",
        "ratio to peer": f"{p50 / peer:.3f}" if peer else "",
    }


def measure(database: str, env: dict, args) -> list[dict]:
    data_dir = Path(tempfile.mkdtemp(prefix=f"grpo-bench-compare-{database}-"))
    try:
        with AsgiServer(data_dir, env=env) as server:
            print(f"[{database}] seeding {RUNS} runs x {len(METRICS)} metrics x {args.points_per_metric:,} points ...",
                  flush=True)
            big = seed(server, "big", args.points_per_metric)
            small = seed(server, "small", SMALL_POINTS)
            print(f"[{database}] seeded in {big['seconds']:.0f} s (+ {small['seconds']:.0f} s small runs)", flush=True)
            client = logged_in_client(server, "owner", "owner-pass-123")
            runs = lambda seeded: ",".join(map(str, seeded["ids"]))  # noqa: E731
            rows, naive_p50 = [], None
            if not args.skip_peers:
                naive = shell_json(server, NAIVE.replace("IDS", json.dumps(big["ids"]))
                                   .replace("METRICS", json.dumps(METRICS)).replace("REPEATS", str(args.naive_repeats)))["ms"]
                naive_p50 = statistics.median(naive)
                rows.append(row(database, "naive: all points through the ORM, bucketed in Python (no HTTP)",
                                args.points_per_metric, naive, None, None))
                per_run = per_run_endpoint(client, big["ids"], args.repeats)
                rows.append(row(database, "peer: 8 x GET /api/runs/<id>/metrics/ (bucket means)",
                                args.points_per_metric, per_run, None, naive_p50))
            for x_axis in ("step", "time", "samples"):
                timings = timed_get(client, "/api/compare/", {"runs": runs(big), "x": x_axis}, args.repeats)
                rows.append(row(database, f"GET /api/compare/ x={x_axis}", args.points_per_metric, timings,
                                API_TARGET_MS, naive_p50))
            small_api = timed_get(client, "/api/compare/", {"runs": runs(small)}, args.repeats)
            rows.append(row(database, "GET /api/compare/ x=step", SMALL_POINTS, small_api, API_TARGET_MS, naive_p50))
            if args.skip_page:
                return rows
            print(f"[{database}] page ready in Chromium ...", flush=True)
            small_page = page_ready_ms(server, small["ids"], args.page_repeats)
            big_page = page_ready_ms(server, big["ids"], args.page_repeats)
            rows.append(row(database, "compare page ready (Chromium)", SMALL_POINTS, small_page, PAGE_TARGET_MS, None))
            rows.append(row(database, "compare page ready (Chromium)", args.points_per_metric, big_page,
                            PAGE_TARGET_MS, statistics.median(small_page)))
            return rows
    except Exception:
        log = data_dir / "server.log"
        if log.exists():
            print(f"--- server log tail ---\n{log.read_text()[-3000:]}", file=sys.stderr)
        raise
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


# --smoke: every row at the smallest (the big runs no bigger than the small ones), SQLite, once each.
SMOKE_SIZES = {"points_per_metric": SMALL_POINTS, "repeats": 1, "page_repeats": 1, "naive_repeats": 1}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--points-per-metric", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=10, help="timed API calls per row (after one warm-up)")
    parser.add_argument("--page-repeats", type=int, default=5, help="timed page loads per row (after one warm-up)")
    parser.add_argument("--naive-repeats", type=int, default=2)
    parser.add_argument("--only", choices=["sqlite", "postgresql"])
    parser.add_argument("--skip-page", action="store_true")
    parser.add_argument("--skip-peers", action="store_true",
                        help="only the compare API (and page): no naive peer, no per-run endpoint (minutes each)")
    parser.add_argument("--pg-admin-url", default=os.environ.get("BENCH_PG_ADMIN_URL",
                                                                 "postgresql://postgres@127.0.0.1:5432/postgres"))
    add_smoke_options(parser)
    args = parser.parse_args(argv)
    if args.smoke:
        vars(args).update(SMOKE_SIZES, only=args.only or "sqlite")
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}; load average before: {load_average()}")
    began = time.monotonic()
    rows = []
    if args.only in (None, "sqlite"):
        rows += measure("sqlite", {"DATABASE_URL": ""}, args)
    if args.only in (None, "postgresql"):
        problem = postgres_problem(args.pg_admin_url)
        if problem:
            print(f"[postgresql] skipped: {problem}")
        else:
            with PostgresDatabase(args.pg_admin_url) as database_url:
                rows += measure("postgresql", {"DATABASE_URL": database_url, "REDIS_URL": ""}, args)
    print_table(f"Comparing {RUNS} runs, {len(METRICS)} metrics, 500 points per run and metric "
                f"(ratio: API rows to the naive ORM peer; the big page to the small page)", rows)
    print(f"\ntotal {time.monotonic() - began:.0f} s; load average after: {load_average()}")


if __name__ == "__main__":
    main()
