"""The live run page in a real browser: first render and first chart with 100,000 metric points
stored, and how fluid the charts stay while events arrive at 20 per second.

Not a test: it starts the product (migrate + uvicorn, tests/support/asgi_server.py) in a
temporary data directory, drives Debian's Chromium with Playwright, prints tables and asserts
nothing.

    .venv/bin/python -m bench.pages            # about 2 minutes
    .venv/bin/python -m bench.pages --quick    # fewer repeats, shorter stream
    .venv/bin/python -m bench.pages --smoke    # runs of 1,000 and 100 points, 1 load each, a 1 s stream

1. Load: for a run with 100,000 stored metric points (the trainer's 35 metric names) and, as
   the peer, a run with 1,000: the server's HTML render (GET /runs/<id>/), then in Chromium
   the navigation's DOMContentLoaded, the first chart drawn (the performance mark
   "grpo:first-chart-drawn" set by frontend/static/js/charts.js, from navigation start) and
   all charts drawn. Medians over repeated fresh page loads.
2. Fluidity: the 100,000-point run's page open while a reporter posts one `metrics` event
   (all 35 names) every 50 ms through the ingest API, as a trainer does, against the same page
   left idle for as long (the peer). In the page: frames counted with requestAnimationFrame,
   frames dropped (each gap between frames longer than 1.5 frame intervals counts its missing
   frames), long tasks (PerformanceObserver "longtask", > 50 ms) and long animation frames
   ("long-animation-frame", where Chromium has it); and how many steps the charts gained.
"""
import argparse
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import httpx

from bench.report import markdown_table, median
from bench.smoke import add_smoke_options
from tests.support.asgi_server import AsgiServer, logged_in_client
from worker.trainer.metric_names import (ASYNC_DROPPED_STALE, ASYNC_IN_FLIGHT, ASYNC_QUEUE_DEPTH, ASYNC_STALENESS_MAX,
                                         ASYNC_STALENESS_MEAN, ASYNC_WAIT_FOR_ROLLOUTS_S, ROLLOUT_CLIPPED_RATIO,
                                         ROLLOUT_COMPLETION_LENGTH_MAX, ROLLOUT_COMPLETION_LENGTH_MEAN,
                                         ROLLOUT_COMPLETION_LENGTH_MIN, ROLLOUT_FRAC_REWARD_ZERO_STD,
                                         ROLLOUT_REWARD_FN_MEAN, ROLLOUT_REWARD_FN_STD, ROLLOUT_REWARD_MEAN,
                                         ROLLOUT_REWARD_STD, SYSTEM_GENERATION_TOKENS_PER_S,
                                         SYSTEM_MODEL_VERSION, SYSTEM_STEP_TIME_S, SYSTEM_TRAINING_TOKENS_PER_S,
                                         SYSTEM_TRAIN_SECONDS, SYSTEM_WEIGHT_SYNC_S, TRAIN_ADVANTAGE_STD,
                                         TRAIN_CLIP_RATIO_HIGH, TRAIN_CLIP_RATIO_LOW, TRAIN_CLIP_RATIO_REGION,
                                         TRAIN_ENTROPY, TRAIN_GRAD_NORM, TRAIN_IMPORTANCE_RATIO_MAX,
                                         TRAIN_IMPORTANCE_RATIO_MEAN, TRAIN_IMPORTANCE_RATIO_MIN, TRAIN_KL_TO_SAMPLER,
                                         TRAIN_LEARNING_RATE, TRAIN_LOSS)


CHROMIUM = "/usr/bin/chromium"
# The seeded runs, the largest first (the fluidity run): the figures', and the smoke run's.
RUNS = [("100k points", 100_000), ("1k points", 1_000)]
SMOKE_RUNS = [("1k points", 1_000), ("100 points", 100)]
FIRST_CHART_TARGET_MS = 1000
EVENTS_PER_S = 20
# What the trainer reports each step (worker/trainer/training/step.py, app.py, rollout/metrics.py,
# algorithm/loss.py), with two reward functions.
METRIC_NAMES = [
    TRAIN_LOSS, TRAIN_ENTROPY, TRAIN_GRAD_NORM, TRAIN_LEARNING_RATE, TRAIN_ADVANTAGE_STD,
    TRAIN_CLIP_RATIO_LOW, TRAIN_CLIP_RATIO_HIGH, TRAIN_CLIP_RATIO_REGION, TRAIN_KL_TO_SAMPLER,
    TRAIN_IMPORTANCE_RATIO_MIN, TRAIN_IMPORTANCE_RATIO_MEAN, TRAIN_IMPORTANCE_RATIO_MAX,
    ROLLOUT_REWARD_MEAN, ROLLOUT_REWARD_STD,
    *(family.name(reward=reward) for reward in ("accuracy", "format")
      for family in (ROLLOUT_REWARD_FN_MEAN, ROLLOUT_REWARD_FN_STD)), ROLLOUT_COMPLETION_LENGTH_MEAN,
    ROLLOUT_COMPLETION_LENGTH_MIN, ROLLOUT_COMPLETION_LENGTH_MAX, ROLLOUT_CLIPPED_RATIO,
    ROLLOUT_FRAC_REWARD_ZERO_STD, ASYNC_STALENESS_MEAN, ASYNC_STALENESS_MAX, ASYNC_DROPPED_STALE,
    ASYNC_QUEUE_DEPTH, ASYNC_IN_FLIGHT, ASYNC_WAIT_FOR_ROLLOUTS_S, SYSTEM_TRAIN_SECONDS,
    SYSTEM_TRAINING_TOKENS_PER_S, SYSTEM_GENERATION_TOKENS_PER_S, SYSTEM_WEIGHT_SYNC_S,
    SYSTEM_STEP_TIME_S, SYSTEM_MODEL_VERSION,
]

SEED = """
import json, math, random
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.utils import timezone
from runs.telemetry.metric_rows import database_time, insert_metric_rows, metric_row
from runs.models import Dataset, LogLine, RewardFunction, Run, RunReward, Sample
from worker.trainer.config import TrainingConfig
owner = get_user_model().objects.create_user("owner", password="owner-pass-123")
dataset = Dataset.objects.create(owner=owner, name="d", source="generator", generator="arithmetic", row_count=1)
reward = RewardFunction.objects.create(owner=owner, name="accuracy", kind="builtin", builtin="accuracy")
NAMES = %(names)r
made = {}
for label, points in %(runs)r:
    steps = -(-points // len(NAMES))  # at least `points` points
    run = Run.objects.create(owner=owner, name=label, dataset=dataset,
                             config=TrainingConfig(max_steps=steps * 2).model_dump(mode="json"))
    RunReward.objects.create(run=run, reward_function=reward)
    run.enqueue(); run.mark_starting(); run.mark_running()
    token = run.issue_ingest_token()
    run.current_step, run.last_heartbeat_at = steps, timezone.now()
    run.save()
    moment = database_time(timezone.now())
    rng = random.Random(0)
    rows = [metric_row(run.pk, name, step, math.sin(step / 50 + i) + rng.random() * 0.1, moment, 1)
            for step in range(1, steps + 1) for i, name in enumerate(NAMES)]
    for start in range(0, len(rows), 20000):
        insert_metric_rows(rows[start:start + 20000])
    LogLine.objects.bulk_create([LogLine(run=run, time=timezone.now(), message=f"step {s} done") for s in range(300)])
    Sample.objects.bulk_create([Sample(run=run, step=s, group=g, prompt="What is 2 + 2?", completion="#### 4",
                                       rewards={"accuracy": 1.0}, total_reward=1.0, advantage=0.1)
                                for s in range(1, steps + 1, 10) for g in range(2)])
    made[label] = {"run_id": run.pk, "token": token, "points": len(rows), "steps": steps}
print(json.dumps(made))
"""

# In the page: frames and dropped frames by requestAnimationFrame, long tasks and long
# animation frames by PerformanceObserver, for `ms` milliseconds; resolves with the counts.
WATCH_FRAMES = """
async (ms) => {
  const longTasks = [], longFrames = [];
  const observers = [];
  for (const [type, list] of [["longtask", longTasks], ["long-animation-frame", longFrames]]) {
    if (!PerformanceObserver.supportedEntryTypes.includes(type)) { list.unsupported = true; continue; }
    const observer = new PerformanceObserver((entries) => list.push(...entries.getEntries().map((e) => e.duration)));
    observer.observe({ type, buffered: false });
    observers.push(observer);
  }
  const gaps = [];
  const started = performance.now();
  let last = started;
  await new Promise((done) => {
    function frame(now) {
      gaps.push(now - last); last = now;
      if (now - started < ms) requestAnimationFrame(frame); else done();
    }
    requestAnimationFrame(frame);
  });
  observers.forEach((o) => o.disconnect());
  const sorted = gaps.slice(1).sort((a, b) => a - b);
  const interval = sorted[Math.floor(sorted.length / 2)] || 16.7;  // the display's frame interval
  const dropped = gaps.slice(1).reduce((n, gap) => n + (gap > 1.5 * interval ? Math.round(gap / interval) - 1 : 0), 0);
  return {
    frames: gaps.length, interval, dropped, worstGap: Math.max(...gaps.slice(1)),
    longTasks: longTasks.length, longTaskMs: longTasks.reduce((a, b) => a + b, 0), longTasksSupported: !longTasks.unsupported,
    longFrames: longFrames.length, longFramesSupported: !longFrames.unsupported,
  };
}
"""

FIRST_CHART_MS = """() => {
  const mark = (name) => performance.getEntriesByName(name)[0].startTime;
  const nav = performance.getEntriesByType("navigation")[0];
  return {firstChart: mark("grpo:first-chart-drawn"), loaded: mark("grpo:metrics-loaded"),
          domContentLoaded: nav.domContentLoadedEventEnd};
}"""
# Every series fetched (run_page.js marks it), and every chart box in the viewport drawn.
IN_VIEW_DRAWN = """() => {
  if (!performance.getEntriesByName('grpo:metrics-loaded').length) return false;
  const inView = [...document.querySelectorAll('.chart-box')].filter((b) => {
    const r = b.getBoundingClientRect(); return r.height > 0 && r.top < innerHeight && r.bottom > 0; });
  return inView.length > 0 && inView.every((b) => Number(b.dataset.points || 0) > 0);
}"""


def seed(server: AsgiServer, runs: list[tuple[str, int]]) -> dict:
    return server.shell_json(SEED % {"names": METRIC_NAMES, "runs": runs})


def server_render_ms(server: AsgiServer, client: httpx.Client, run_id: int, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        response = client.get(f"/runs/{run_id}/")
        response.raise_for_status()
        times.append((time.perf_counter() - started) * 1000)
    return median(times)


def browser_load(context, server: AsgiServer, run_id: int, repeats: int) -> dict:
    """Fresh page loads of the run page; medians of DOMContentLoaded, first chart, all series, charts in view."""
    loads = {"dcl": [], "first": [], "loaded": [], "view": []}
    for _ in range(repeats):
        page = context.new_page()
        page.goto(f"{server.url}/runs/{run_id}/")
        page.wait_for_function("() => performance.getEntriesByName('grpo:first-chart-drawn').length > 0", timeout=30_000)
        page.wait_for_function(IN_VIEW_DRAWN, timeout=30_000)
        in_view = page.evaluate("() => performance.now()")
        marks = page.evaluate(FIRST_CHART_MS)
        loads["dcl"].append(marks["domContentLoaded"])
        loads["first"].append(marks["firstChart"])
        loads["loaded"].append(marks["loaded"])
        loads["view"].append(in_view)
        page.close()
    return {key: median(values) for key, values in loads.items()}


class Reporter(threading.Thread):
    """Posts one metrics event with every name EVENTS_PER_S times a second, like a fast trainer."""

    def __init__(self, server: AsgiServer, run: dict, seconds: float):
        super().__init__(daemon=True)
        self.url = f"{server.url}/api/runs/{run['run_id']}/events/"
        self.headers = {"Authorization": f"Bearer {run['token']}"}
        self.first_step, self.seconds = run["steps"] + 1, seconds
        self.sent = self.late = 0

    def run(self):
        interval = 1 / EVENTS_PER_S
        with httpx.Client(timeout=10) as client:
            started = time.perf_counter()
            while time.perf_counter() - started < self.seconds:
                step = self.first_step + self.sent
                values = {name: (step % 100) / 100 + i for i, name in enumerate(METRIC_NAMES)}
                client.post(self.url, headers=self.headers, json={"source": "bench", "events": [
                    {"seq": self.sent + 1, "type": "metrics", "step": step, "values": values}]}).raise_for_status()
                self.sent += 1
                pause = (self.sent * interval) - (time.perf_counter() - started)
                if pause > 0:
                    time.sleep(pause)
                else:
                    self.late += 1


def main_thread_seconds(cdp) -> dict:
    """CPU seconds the page's main thread spent so far: all tasks, and scripts alone (Chromium's counters)."""
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return {"tasks": metrics["TaskDuration"], "script": metrics["ScriptDuration"]}


def fluidity(context, server: AsgiServer, run: dict, seconds: float, with_events: bool) -> dict:
    page = context.new_page()
    page.goto(f"{server.url}/runs/{run['run_id']}/")
    page.wait_for_selector("#live-indicator[data-state=live]", timeout=30_000)
    page.wait_for_function(IN_VIEW_DRAWN, timeout=30_000)
    before = int(page.get_attribute('.chart-box[data-chart="loss"]', "data-points"))
    cdp = context.new_cdp_session(page)
    cdp.send("Performance.enable")
    busy_before = main_thread_seconds(cdp)
    reporter = Reporter(server, run, seconds) if with_events else None
    if reporter:
        reporter.start()
    result = page.evaluate(WATCH_FRAMES, seconds * 1000)
    result["busy"] = {key: (value - busy_before[key]) / seconds for key, value in main_thread_seconds(cdp).items()}
    if reporter:
        reporter.join()
        page.wait_for_timeout(500)  # the last event's redraw
    result["gained"] = int(page.get_attribute('.chart-box[data-chart="loss"]', "data-points")) - before
    result["sent"] = reporter.sent if reporter else 0
    result["late"] = reporter.late if reporter else 0
    page.close()
    return result


def print_load_table(rows: list[tuple[str, dict, float]]):
    print("\nLoad: the run page, fresh page loads (medians, ms from navigation start)")
    header = ("run", "metric points", "server HTML render", "DOMContentLoaded", "first chart drawn",
              "all series fetched", "charts in view drawn")
    print(markdown_table(header, [(label, f"{load['points']:,}", f"{html_ms:.0f}", f"{load['dcl']:.0f}",
                                   f"{load['first']:.0f}", f"{load['loaded']:.0f}", f"{load['view']:.0f}")
                                  for label, load, html_ms in rows]))
    (big_label, big, _), (small_label, small, _) = rows[:2]
    verdict = "met" if big["first"] <= FIRST_CHART_TARGET_MS else "MISSED"
    print(f"first chart, {big_label} vs {small_label}: {big['first'] / small['first']:.2f}x; "
          f"target ≤ {FIRST_CHART_TARGET_MS} ms: {verdict} ({big['first']:.0f} ms)")


def print_fluidity_table(idle: dict, busy: dict, seconds: float, label: str):
    print(f"\nFluidity: the {label} run page for {seconds:g} s, idle vs {EVENTS_PER_S} metrics events/s "
          f"({len(METRIC_NAMES)} values each)")
    header = ("page", "events sent", "steps gained", "frames", "frame interval ms", "dropped frames", "worst gap ms",
              "long tasks (total ms)", "long animation frames", "main thread busy", "of which scripts")
    print(markdown_table(header, [fluidity_row("idle (peer)", idle), fluidity_row(f"{EVENTS_PER_S} events/s", busy)]))
    share = busy["dropped"] / max(busy["frames"] + busy["dropped"], 1)
    print(f"dropped frames at {EVENTS_PER_S} events/s: {busy['dropped']} of {busy['frames'] + busy['dropped']} "
          f"({share:.1%}); idle: {idle['dropped']}; frames ratio busy/idle: {busy['frames'] / max(idle['frames'], 1):.2f}; "
          f"reporter fell behind schedule {busy['late']} times")


def fluidity_row(label: str, r: dict) -> tuple:
    tasks = f"{r['longTasks']} ({r['longTaskMs']:.0f})" if r["longTasksSupported"] else "n/a"
    frames = str(r["longFrames"]) if r["longFramesSupported"] else "n/a"
    return (label, r["sent"], r["gained"], r["frames"], f"{r['interval']:.1f}", r["dropped"], f"{r['worstGap']:.0f}",
            tasks, frames, f"{r['busy']['tasks']:.1%}", f"{r['busy']['script']:.1%}")


def main(argv: list[str] | None = None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="3 loads per run and a 5 s stream (default 7 and 15 s)")
    add_smoke_options(parser)
    args = parser.parse_args(argv)
    repeats, seconds = (1, 1.0) if args.smoke else (3, 5.0) if args.quick else (7, 15.0)
    seeded = SMOKE_RUNS if args.smoke else RUNS
    from playwright.sync_api import sync_playwright

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"bench.pages: {os.cpu_count()} CPUs, load average {load} at start (server, Chromium and this script share them)")
    data_dir = Path(tempfile.mkdtemp(prefix="bench-pages-"))
    try:
        with AsgiServer(data_dir) as server:
            started = time.perf_counter()
            runs = seed(server, seeded)
            print(f"seeded {sum(r['points'] for r in runs.values()):,} metric points in {time.perf_counter() - started:.1f} s")
            client = logged_in_client(server, "owner", "owner-pass-123")
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                context = browser.new_context(viewport={"width": 1366, "height": 900})
                context.add_cookies([{"name": name, "value": value, "url": server.url} for name, value in client.cookies.items()])
                rows = []
                for label, run in runs.items():
                    browser_load(context, server, run["run_id"], 1)  # warm-up: static files, caches
                    load = {**browser_load(context, server, run["run_id"], repeats), "points": run["points"]}
                    rows.append((label, load, server_render_ms(server, client, run["run_id"], repeats)))
                print_load_table(rows)
                largest = seeded[0][0]
                idle = fluidity(context, server, runs[largest], seconds, with_events=False)
                busy = fluidity(context, server, runs[largest], seconds, with_events=True)
                print_fluidity_table(idle, busy, seconds, largest)
                print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
                browser.close()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
