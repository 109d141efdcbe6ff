"""The small requests of bench/load.py's load, on one asyncio loop: runs reporting at the demo's
rate, logged-in viewers on websockets who reload their run's page, and dry runs.

The demo's rate: the cpu-demo preset trains a step every 6-10 s on this machine (bench/README.md,
trainer and learning) and its reporter flushes once a second and beats every 5 s
(worker/trainer/reporting/session.py). So each run here sends one batch a second: a step's
metrics (30 values, as bench/ingest.py names them), its 16 samples and a log line every
STEP_S, a log line otherwise, a heartbeat every HEARTBEAT_S.
"""
import asyncio
import json
import random
import time
from dataclasses import dataclass, field

import httpx
import websockets

from bench.ingest import metric_names

FLUSH_S, STEP_S, HEARTBEAT_S = 1.0, 6.0, 5.0
SAMPLES_PER_STEP, METRICS_PER_STEP = 16, 30
PAGE_EVERY_S = 3.0
COMPLETION = "Let me add the numbers step by step. " * 12 + "#### 42"


@dataclass
class Observed:
    """What the load's clients saw; the figures are computed from these."""
    ingest_s: list[float] = field(default_factory=list)
    page_s: list[float] = field(default_factory=list)
    ws_delay_s: list[float] = field(default_factory=list)
    refused: dict[str, int] = field(default_factory=dict)
    metric_events: dict[int, int] = field(default_factory=dict)  # run id: steps reported during the load
    watchers: dict[int, int] = field(default_factory=dict)  # run id: viewers on its websocket
    dry_runs: list[str] = field(default_factory=list)

    def count_refusal(self, what: str, answer: httpx.Response | Exception) -> None:
        key = f"{what} HTTP {answer.status_code}" if isinstance(answer, httpx.Response) else \
            f"{what} {type(answer).__name__}"
        self.refused[key] = self.refused.get(key, 0) + 1


class DemoReporter:
    """One run's reporter at the demo's rate (see the module's docstring)."""

    def __init__(self, url: str, run: dict):
        self.run_id = run["run_id"]
        self.url = f"{url}/api/runs/{run['run_id']}/events/"
        self.headers = {"Authorization": f"Bearer {run['token']}", "Content-Type": "application/json"}
        self.seq, self.step = 0, 0
        self.rng = random.Random(run["run_id"])

    def _event(self, **fields) -> dict:
        self.seq += 1
        return {"seq": self.seq, **fields}

    def status(self, *statuses: str) -> bytes:
        return self._body([self._event(type="status", status=status) for status in statuses])

    def batch(self, tick: int) -> tuple[bytes, bool]:
        """The batch of second `tick`, and whether it holds a step's metrics."""
        events, is_step = [], tick % int(STEP_S) == 0
        if is_step:
            self.step += 1
            events.append(self._event(type="metrics", step=self.step, time=time.time(),
                                      values={name: self.rng.random() for name in metric_names(METRICS_PER_STEP)}))
            events.append(self._event(type="samples", step=self.step, samples=[
                {"group": index // 8, "prompt": f"What is {self.rng.randint(1, 99)} + {self.rng.randint(1, 99)}?",
                 "completion": COMPLETION, "rewards": {"accuracy": 1.0}, "total_reward": 1.0, "advantage": 0.0,
                 "model_version": self.step, "staleness": 1, "num_tokens": 120, "finish_reason": "stop"}
                for index in range(SAMPLES_PER_STEP)]))
        events.append(self._event(type="log", level="info", message=f"step {self.step}: rollouts queued"))
        if tick % int(HEARTBEAT_S) == 0:
            events.append(self._event(type="heartbeat", step=self.step))
        return self._body(events), is_step

    @staticmethod
    def _body(events: list[dict]) -> bytes:
        return json.dumps({"source": "trainer", "events": events}).encode()


async def report_until(reporter: DemoReporter, seen: Observed, client: httpx.AsyncClient, done: asyncio.Event,
                       offset_s: float) -> None:
    await asyncio.sleep(offset_s)
    started, tick = time.perf_counter(), 0
    while not done.is_set():
        body, is_step = reporter.batch(tick)
        sent = time.perf_counter()
        try:
            answer = await client.post(reporter.url, content=body, headers=reporter.headers)
            if answer.status_code != 200:
                seen.count_refusal("ingest", answer)
        except httpx.HTTPError as exc:
            seen.count_refusal("ingest", exc)
        seen.ingest_s.append(time.perf_counter() - sent)
        seen.metric_events[reporter.run_id] = seen.metric_events.get(reporter.run_id, 0) + is_step
        tick += 1
        await asyncio.sleep(max(0.0, started + tick * FLUSH_S - time.perf_counter()))


@dataclass
class Viewer:
    cookies: dict
    run_id: int


def cookie_header(cookies: dict) -> dict:
    return {"Cookie": "; ".join(f"{name}={value}" for name, value in cookies.items())}


async def watch_until(url: str, viewer: Viewer, seen: Observed, ready: asyncio.Event, done: asyncio.Event) -> None:
    """A logged-in viewer on the run's websocket (`ready` once it is on), reloading the page and its
    API every PAGE_EVERY_S."""
    socket_url = url.replace("http", "ws", 1) + f"/ws/runs/{viewer.run_id}/"
    headers = {**cookie_header(viewer.cookies), "Origin": url}
    async with websockets.connect(socket_url, additional_headers=headers, max_size=None) as socket:
        await asyncio.wait_for(socket.recv(), 30)  # run.hello
        ready.set()
        listener = asyncio.create_task(_listen(socket, seen))
        async with httpx.AsyncClient(base_url=url, cookies=viewer.cookies, timeout=60) as client:
            await asyncio.sleep(random.uniform(0, PAGE_EVERY_S))
            paths = [f"/runs/{viewer.run_id}/", f"/api/runs/{viewer.run_id}/"]
            index = 0
            while not done.is_set():
                sent = time.perf_counter()
                try:
                    answer = await client.get(paths[index % 2])
                    if answer.status_code != 200:
                        seen.count_refusal("page", answer)
                except httpx.HTTPError as exc:
                    seen.count_refusal("page", exc)
                seen.page_s.append(time.perf_counter() - sent)
                index += 1
                try:
                    await asyncio.wait_for(done.wait(), PAGE_EVERY_S)
                except TimeoutError:
                    pass
        listener.cancel()


async def _listen(socket, seen: Observed) -> None:
    async for raw in socket:
        now, message = time.time(), json.loads(raw)
        if message.get("type") == "run.metrics":
            seen.ws_delay_s += [now - point["time"] for point in message["payload"]["points"]
                                if point.get("time")]


async def dry_run(url: str, viewer: Viewer, environment_id: int, asked: dict, seen: Observed) -> None:
    """One dry run of an environment, waited for to its end: a 202 (the model plays on the control
    plane's consumer) is polled at its Location until its state is done or failed."""
    headers = {"X-CSRFToken": viewer.cookies.get("csrftoken", ""), "Referer": url + "/"}
    started = time.perf_counter()
    async with httpx.AsyncClient(base_url=url, cookies=viewer.cookies, timeout=600) as client:
        answer = await client.post(f"/api/environments/{environment_id}/dry-run/", json=asked, headers=headers)
        outcome = await _outcome(client, answer)
    seen.dry_runs.append(f"{outcome} in {time.perf_counter() - started:.1f} s")


async def _outcome(client: httpx.AsyncClient, answer: httpx.Response, timeout_s: float = 900) -> str:
    if answer.status_code == 200:
        return "done"
    if answer.status_code != 202:
        return f"HTTP {answer.status_code}: {answer.text[:120]}"
    where, deadline = answer.headers["Location"], time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        await asyncio.sleep(0.5)
        status = await client.get(where)
        if status.status_code != 200:
            return f"HTTP {status.status_code} from {where}"
        if (state := status.json()["state"]) in ("done", "failed"):
            return "done (202, then polled)" if state == "done" else f"failed: {status.json()['error'][:120]}"
    return f"still {state} after {timeout_s:.0f} s"
