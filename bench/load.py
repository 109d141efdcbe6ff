"""The control plane at real sizes and under load (issue #33): one table of targets per configuration.

    .venv/bin/python -m bench.load                 # 10 GB checkpoint, both configurations
    .venv/bin/python -m bench.load --size 2 --only embedded
    .venv/bin/python -m bench.load --smoke         # 20 MB and a few seconds of load: the harness works

A real control plane as `make run` starts it (bench/load_server.py: uvicorn, several processes
where Redis carries the channel layer, a consumer of the `controlplane` queue), once on the
embedded defaults and once on PostgreSQL, Redis and a bucket on moto_server, under at once:
20 logged-in viewers on websockets reloading their run's page, 8 runs reporting at the demo's
rate (bench/load_traffic.py), 2 users downloading a synthetic checkpoint of --size GB (one cut
off half-way and resumed with Range), 2 workers uploading one through the real uploader, and 2
model-played dry runs. The load lasts until every transfer and dry run has ended (at least
--seconds). Peer: a local disk copy of the same checkpoint, timed in the same run before the
load. Every request goes to 127.0.0.1; everything created is deleted. Nothing is asserted.
"""
import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
import multiprocessing
from pathlib import Path

import httpx

from bench.load_server import (LoadServer, MemoryWatch, default_web_processes, embedded, problems_with_services,
                               production)
from bench.load_traffic import DemoReporter, Observed, Viewer, dry_run, report_until, watch_until
from bench.load_transfers import download, local_copy_s, make_checkpoint, manifest_of, upload
from bench.report import markdown_table, percentile
from tests.support.asgi_server import ROOT, logged_in_client

VIEWERS, REPORTING_RUNS, DOWNLOADERS, UPLOADERS, DRY_RUNS = 20, 8, 2, 2, 2
MB, GB = 2 ** 20, 2 ** 30
TARGETS = {"ingest_p99_s": 0.250, "page_p99_s": 1.0, "rss_growth": 256 * MB, "download_ratio": 0.5}
PASSWORD = "owner-pass-123"

SEED = """
import json
from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone
from bench.load_transfers import make_checkpoint
from runs.models import Checkpoint, Dataset, Environment, EnvironmentReward, RewardFunction, Run, RunReward
from worker.trainer.config import TrainingConfig
owner = get_user_model().objects.create_user("owner", password=PASSWORD)
dataset = Dataset.objects.create(owner=owner, name="sums", source="generator", generator="arithmetic", row_count=100)
reward = RewardFunction.objects.create(owner=owner, name="acc", kind="builtin", builtin="accuracy")
environment = Environment.objects.create(owner=owner, dataset=dataset, name="feedback", kind="builtin",
                                         builtin="feedback", params={"turn_penalty": 0.0, "answer_column": "answer"})
EnvironmentReward.objects.create(environment=environment, reward_function=reward, weight=1.0)
def new_run(name):
    run = Run.objects.create(owner=owner, name=name, dataset=dataset, config=TrainingConfig().model_dump())
    RunReward.objects.create(run=run, reward_function=reward)
    run.enqueue()
    token = run.issue_ingest_token()
    run.save()
    return {"run_id": run.pk, "token": token}
reporting = [new_run(f"reporting-{index}") for index in range(REPORTING)]
uploading = [new_run(f"uploading-{index}") for index in range(UPLOADING)]
holder = new_run("holds-a-checkpoint")
folder = make_checkpoint(settings.RUNS_DIR / str(holder["run_id"]) / "checkpoint-1", SIZE)
checkpoint = Checkpoint.objects.create(run_id=holder["run_id"], step=1, path=str(folder), size_bytes=SIZE,
                                       model_version=1, created_at=timezone.now())
print(json.dumps({"reporting": reporting, "uploading": uploading, "environment": environment.pk,
                  "download": f"/api/runs/{holder['run_id']}/checkpoints/{checkpoint.pk}/download/",
                  "folder": str(folder)}))
"""

LISTED = """
import json
from runs.models import Checkpoint
print(json.dumps([{"run": c.run_id, "in_store": c.in_store, "files": c.files}
                  for c in Checkpoint.objects.filter(run_id__in=RUNS, step=1)]))
"""


def seed(server: LoadServer, size: int) -> dict:
    values = f"PASSWORD = {PASSWORD!r}\nREPORTING = {REPORTING_RUNS}\nUPLOADING = {UPLOADERS}\nSIZE = {size}\n"
    return server.shell_json(values + SEED)


def started_reporters(url: str, runs: list[dict]) -> list[DemoReporter]:
    """Each run says it is starting, then running, as its trainer would (its token then takes
    uploads), and reports a first step: first-use costs stay out of the load's figures."""
    reporters = []
    for run in runs:
        reporter = DemoReporter(url, run)
        for body in (reporter.status("starting", "running"), reporter.batch(0)[0]):
            httpx.post(reporter.url, content=body, headers=reporter.headers, timeout=60).raise_for_status()
        reporters.append(reporter)
    return reporters


def warm_up(url: str, viewers: list[Viewer], web_processes: int) -> None:
    """Each web process's first page and API answers (imports, templates) before the load."""
    for viewer in viewers[:2 * web_processes]:
        with httpx.Client(base_url=url, cookies=viewer.cookies, timeout=60) as client:
            client.get(f"/runs/{viewer.run_id}/").raise_for_status()
            client.get(f"/api/runs/{viewer.run_id}/").raise_for_status()


def log_in(server: LoadServer, count: int, runs: list[dict]) -> list[Viewer]:
    viewers = []
    for index in range(count):
        client = logged_in_client(server, "owner", PASSWORD)
        viewers.append(Viewer(dict(client.cookies), runs[index % len(runs)]["run_id"]))
        client.close()
    return viewers


def dry_run_request(data_dir: Path, smoke: bool) -> tuple[dict, str]:
    """A model-played dry run where a model is prepared on this machine (var/models, linked into
    the bench's data directory); typed turns otherwise, and in --smoke."""
    prepared = ROOT / "var" / "models"
    if smoke or not prepared.is_dir():
        return {"turns": ["#### 5", "so #### 6"], "max_turns": 2}, "typed turns"
    (data_dir / "models").symlink_to(prepared, target_is_directory=True)
    return {"max_turns": 2}, "played by the default model"


async def apply_load(url: str, reporters: list[DemoReporter], viewers: list[Viewer], dry_runs, start_transfers,
                     min_s: float, seen: Observed) -> float:
    """Viewers connect first; then the reports, page loads, dry runs and transfers run together
    until the transfers and dry runs have ended and min_s has passed. Returns the load's seconds."""
    done = asyncio.Event()
    ready = [asyncio.Event() for _ in viewers]
    async with httpx.AsyncClient(timeout=60) as client:
        background = [asyncio.create_task(watch_until(url, viewer, seen, on, done)) for viewer, on in zip(viewers, ready)]
        await asyncio.wait_for(asyncio.gather(*(on.wait() for on in ready)), 120)
        started = time.monotonic()
        background += [asyncio.create_task(report_until(reporter, seen, client, done, index / len(reporters)))
                       for index, reporter in enumerate(reporters)]
        dry_runs = [asyncio.create_task(job) for job in dry_runs]
        transfers = start_transfers()
        while not (all(job.ready() for job in transfers) and all(job.done() for job in dry_runs)
                   and time.monotonic() - started >= min_s):
            await asyncio.sleep(0.5)
        seconds = time.monotonic() - started
        done.set()
        results = await asyncio.gather(*background, *dry_runs, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            seen.refused[f"client {type(result).__name__}: {result}"[:120]] = 1
    return seconds


def measure(config, args, work: Path, upload_source: Path, manifest: list[dict]) -> list[tuple]:
    data_dir = work / "control-plane"
    data_dir.mkdir()
    dry_asked, player = dry_run_request(data_dir, args.smoke)
    try:
        with LoadServer(data_dir, config.env, config.web_processes) as server, MemoryWatch(server) as memory:
            seeded = seed(server, args.size_bytes)
            reporters = started_reporters(server.url, seeded["reporting"] + seeded["uploading"])[:REPORTING_RUNS]
            viewers = log_in(server, VIEWERS, seeded["reporting"])
            warm_up(server.url, viewers, config.web_processes)
            peer_s = local_copy_s(Path(seeded["folder"]), work / "peer-copy")
            memory.mark("before")
            time.sleep(2)
            memory.mark("load")
            seen = Observed(watchers=Counter(viewer.run_id for viewer in viewers))
            downloads, uploads = [], []

            def start_transfers():
                downloads.extend(pool.apply_async(download, (server.url, viewers[index].cookies, seeded["download"],
                                                             work / f"download-{index}.tar",
                                                             args.size_bytes // 2 if index else None))
                                 for index in range(DOWNLOADERS))
                uploads.extend(pool.apply_async(upload, (f"{server.url}/api/runs/{run['run_id']}/uploads/", run["token"],
                                                         upload_source, 1, args.upload_timeout_s))
                               for run in seeded["uploading"])
                return downloads + uploads

            # Processes of their own: the transfers' Python work does not hold up the timed requests' loop.
            # Leaving the pool terminates them, so that Ctrl-C stops a transfer too.
            with multiprocessing.get_context("spawn").Pool(DOWNLOADERS + UPLOADERS) as pool:
                dry_runs = [dry_run(server.url, viewers[index], seeded["environment"], dry_asked, seen)
                            for index in range(DRY_RUNS)]
                load_s = asyncio.run(apply_load(server.url, reporters, viewers, dry_runs, start_transfers,
                                                args.seconds, seen))
            memory.mark("after")
            time.sleep(3)
            memory.mark("settled")
            listed = server.shell_json(f"RUNS = {[run['run_id'] for run in seeded['uploading']]}\n" + LISTED)
            return figures(seen, memory, [d.get() for d in downloads], [u.get() for u in uploads], listed,
                           manifest, peer_s, args.size_bytes, load_s, player, config)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def figures(seen: Observed, memory: MemoryWatch, downloads, uploads, listed, manifest, peer_s: float, size: int,
            load_s: float, player: str, config) -> list[tuple]:
    """(measure, target, measured, met?) rows; rows without a target say what else was seen."""
    return [ingest_row(seen), page_row(seen), memory_row(memory), upload_row(uploads, listed, manifest, size, config),
            download_row(downloads, peer_s, size), resume_row(downloads), *seen_rows(seen, memory, uploads, load_s,
                                                                                     player)]


def met(ok: bool) -> str:
    return "met" if ok else "**missed**"


def ingest_row(seen: Observed) -> tuple:
    p50, p99 = percentile(seen.ingest_s, 50), percentile(seen.ingest_s, 99)
    refused = sum(n for key, n in seen.refused.items() if key.startswith("ingest"))
    return (f"ingest POST p99 ({REPORTING_RUNS} runs at the demo's rate)", "≤ 250 ms",
            f"{p99 * 1000:.0f} ms (p50 {p50 * 1000:.0f}, {len(seen.ingest_s)} POSTs, {refused} refused)",
            met(p99 <= TARGETS["ingest_p99_s"] and not refused))


def page_row(seen: Observed) -> tuple:
    p50, p99 = percentile(seen.page_s, 50), percentile(seen.page_s, 99)
    refused = sum(n for key, n in seen.refused.items() if key.startswith("page"))
    return (f"page load p99 (run page and its API, {VIEWERS} viewers)", "≤ 1 s",
            f"{p99:.2f} s (p50 {p50:.2f}, {len(seen.page_s)} loads, {refused} refused)",
            met(p99 <= TARGETS["page_p99_s"] and not refused))


def rss_growth(memory: MemoryWatch, column: int) -> tuple[float, float, float]:
    """Resident MB before the load (median), and the growth at its peak and once it ended."""
    before = percentile(memory.between("before", "load", column), 50)
    peak = max(memory.between("load", "after", column), default=before)
    after = percentile(memory.between("after", "settled", column), 50)
    return before / MB, (peak - before) / MB, (after - before) / MB


def memory_row(memory: MemoryWatch) -> tuple:
    before, peak, after = rss_growth(memory, 1)
    return ("web processes' RSS growth (all of them)", "≤ 256 MB",
            f"+{peak:.0f} MB at the peak, {after:+.0f} MB after (from {before:.0f} MB)",
            met(peak * MB <= TARGETS["rss_growth"]))


def upload_row(uploads, listed: list[dict], manifest: list[dict], size: int, config) -> tuple:
    wanted = sorted((f["path"], f["size"], f["sha256"]) for f in manifest)
    checked = [entry for entry in listed if entry["in_store"] and
               sorted((f["path"], f["size"], f["sha256"]) for f in entry["files"]) == wanted]
    times = ", ".join(f"{u.seconds:.0f} s" if u.listed else "not listed" for u in uploads)
    return (f"checkpoint upload, {size / GB:.2f} GB x {len(uploads)} workers ({config.store} store)",
            "listed, manifest checked", f"{len(checked)}/{len(uploads)} listed as the manifest says ({times})",
            met(len(checked) == len(uploads) and all(u.listed for u in uploads)))


def download_row(downloads, peer_s: float, size: int) -> tuple:
    failed = [d.error for d in downloads if d.error]
    span = max(d.ended for d in downloads) - min(d.started for d in downloads)
    rate, peer_rate = sum(d.bytes for d in downloads) / MB / span, size / MB / peer_s
    ratio = rate / peer_rate
    measured = (f"{rate:.0f} MB/s for {len(downloads)} at once against a local copy's {peer_rate:.0f} MB/s: "
                f"{ratio:.2f}x" + (f"; {failed[0]}" if failed else ""))
    return ("download throughput (tar of the checkpoint)", "≥ 0.5x a local copy", measured,
            met(ratio >= TARGETS["download_ratio"] and not failed))


def resume_row(downloads) -> tuple:
    whole, resumed = downloads[0], downloads[1]
    same = bool(whole.sha256) and whole.sha256 == resumed.sha256 and whole.bytes == resumed.bytes
    return ("download cut off half-way, resumed with Range", "byte-identical",
            f"{resumed.resumed or resumed.error}; {'identical' if same else 'different'} "
            f"({resumed.bytes:,} of {whole.bytes:,} bytes)", met(same and resumed.resumed.startswith("206")))


def seen_rows(seen: Observed, memory: MemoryWatch, uploads, load_s: float, player: str) -> list[tuple]:
    delays = seen.ws_delay_s
    _, consumer_peak, consumer_after = rss_growth(memory, 2)
    said = [line for u in uploads for line in u.said if not line.startswith("info")]
    other = {key: n for key, n in seen.refused.items() if not key.startswith(("ingest", "page"))}
    expected = sum(steps * (seen.watchers.get(run_id, 0)) for run_id, steps in seen.metric_events.items())
    return [
        ("websocket delivery of a step's metrics, p50 / p99", "", f"{percentile(delays, 50) * 1000:.0f} / "
         f"{percentile(delays, 99) * 1000:.0f} ms ({len(delays)} of {expected} expected)", ""),
        (f"{DRY_RUNS} dry runs ({player})", "", "; ".join(seen.dry_runs) or "none ended", ""),
        ("consumer's RSS growth (controlplane queue)", "", f"+{consumer_peak:.0f} MB at the peak, "
                                                           f"{consumer_after:+.0f} MB after", ""),
        ("the load lasted", "", f"{load_s:.0f} s", ""),
        *([("the uploader said", "", "; ".join(said[:3])[:300], "")] if said else []),
        *([("other failures", "", ", ".join(f"{n} x {k}" for k, n in other.items())[:300], "")] if other else []),
    ]


def machine_state() -> str:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), "unknown CPU")
    return (f"{os.cpu_count()} cores ({model}), load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
            f"{shutil.disk_usage(tempfile.gettempdir()).free / GB:.0f} GB free on {tempfile.gettempdir()}")


def checked_out() -> str:
    """The commit, and whether the working tree differs from it (other work in progress)."""
    commit = os.popen(f"git -C {ROOT} rev-parse --short HEAD 2>/dev/null").read().strip() or "?"
    changed = os.popen(f"git -C {ROOT} status --porcelain --untracked-files=no 2>/dev/null").read().strip()
    return f"{commit}{' with uncommitted changes' if changed else ''}"


def disk_problem(size: int, config) -> str:
    """Two uploads and two downloads on this disk at once, and with a bucket on moto_server its
    copies: each upload's parts and then the object they complete (measured): refused if short."""
    needed = size * (DOWNLOADERS + UPLOADERS + (2 * UPLOADERS if "bucket" in config.store else 0)) * 1.1
    free = shutil.disk_usage(tempfile.gettempdir()).free
    return f"needs about {needed / GB:.0f} GB free, {free / GB:.0f} GB here: pass a smaller --size" \
        if needed > free else ""


def configurations(args, work: Path):
    """(name, context manager) of each configuration asked for."""
    if args.only in (None, "embedded"):
        yield "embedded", embedded()
    if args.only in (None, "production"):
        if problem := problems_with_services(args.pg_admin_url, args.redis_url):
            print(f"\n[production] not measured: {problem}", flush=True)
        else:
            yield "production", production(args.pg_admin_url, args.redis_url, args.web_processes, work)


def parse_args(argv: list[str] | None = None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=float, default=10.0, help="the checkpoint's size in GB (default 10)")
    parser.add_argument("--seconds", type=float, default=30.0, help="the load's shortest duration (default 30)")
    parser.add_argument("--smoke", action="store_true", help="a 20 MB checkpoint, 4 s of load, typed dry runs")
    parser.add_argument("--only", choices=["embedded", "production"])
    parser.add_argument("--web-processes", type=int, default=default_web_processes(),
                        help="uvicorn processes with Redis (make run's WEB_PROCESSES; the embedded default is 1)")
    parser.add_argument("--upload-timeout-s", type=float, default=3600)
    parser.add_argument("--pg-admin-url", default=os.environ.get("BENCH_PG_ADMIN_URL",
                                                                 "postgresql://postgres@127.0.0.1:5432/postgres"))
    parser.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379"),
                        help="a Redis server; the bench uses its databases 11 and 12 and empties them")
    args = parser.parse_args(argv)
    if args.smoke:
        args.size, args.seconds = 20 / 1024, min(args.seconds, 4.0)
    args.size_bytes = int(args.size * GB)
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    print(f"machine: {machine_state()}; code at {checked_out()}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="bench-load-"))
    try:
        upload_source = make_checkpoint(work / "worker-checkpoint", args.size_bytes)
        manifest = manifest_of(upload_source)
        for short, context in configurations(args, work):
            with context as config:
                if problem := disk_problem(args.size_bytes, config):
                    print(f"\n[{short}] not measured: {problem}", flush=True)
                    continue
                print(f"\n[{short}] {config.name}: starting, then the load ...", flush=True)
                rows = measure(config, args, work, upload_source, manifest)
                print(f"\n{config.name}; after the load: {machine_state()}")
                print(markdown_table(("measure", "target", "measured", "met?"), rows), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
