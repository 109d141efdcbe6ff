"""Control-plane overhead: `start` in the API to the first metric on the websocket, minus loading.

    .venv/bin/python -m bench.overhead              # 3 runs through the product, 3 direct, ~6 minutes
    .venv/bin/python -m bench.overhead --repeats 1  # one run each side
    .venv/bin/python -m bench.overhead --smoke      # one run each side on a tiny model (bench/smoke.py)

Two ways to the same first metric (the trainer's `setup/*` metrics, sent as soon as the
policy is loaded and vLLM answers, before any training step), each repeated:

- **product**: a real control plane (uvicorn, embedded defaults) and a warm Celery worker.
  The clock starts just before `POST /api/runs/<id>/start/` and stops when the first
  `run.metrics` message arrives on the run's websocket. In between: the commit, the Celery
  message, the worker's "still wanted?" round trip, `starting`, vLLM and the trainer started
  side by side, both loading, the trainer's first batch of events, the ingest and the channel.
- **direct** (the peer): the same trainer and vLLM with nothing around them, as a researcher
  would run them by hand: `python -m worker.trainer --spec` with an offline spec (it starts
  its own vLLM); the clock runs from the process start to the same metrics event appearing in
  its local events file.

Loading is what neither side can avoid: the trainer's imports, its dataset, its model and
optimizer, and vLLM's start (the trainer waits for /health after its own loading, so the
longer of the two counts). The trainer measures all of it on its own clock, from its process
start to the moment it is ready to generate (`setup/process_s` + `setup/setup_s`). On each side

    time not spent loading = time to first metric - trainer start-to-ready

The product's figure is the control-plane overhead (target: <= 3 s): the queue, the worker's
round trip, spawning the children, and carrying the first events to the browser. The direct
one is what a hand-run trainer spends besides loading (about nothing; it has no queue).
vLLM's start varies by tens of seconds with the machine's load, which is why raw times to the
first metric are not compared. Model: the prepared SmolLM2-135M-Instruct (`make
trainer-stack` makes it) or `--model PATH`.

`--smoke --server-url URL`: the direct trainer uses the server at URL (serving bench/smoke.py's
tiny model) instead of starting its own; the product's run still starts its own, as it must.

`--ray` adds a third side, **placed by Ray**: the same product with a second warm worker whose
pool is a Ray cluster of one node on this machine (`ray start`, paid once per cluster and printed
apart), which places each run (worker/placement/driver.py) before it starts: the engine's cost
is its figure less the product's. Its placement is timed apart too, from the run's log (the
worker received it, it was placed on a machine).
"""
import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import websockets

from bench.report import fmt, markdown_table, median
from bench.smoke import SMOKE_SETTINGS, add_smoke_options, refuse_server_url_without_smoke, tiny_model
from tests.support.asgi_server import AsgiServer, logged_in_client
from worker.trainer.processes.groups import stop_process_group

ROOT = Path(__file__).resolve().parents[1]


TARGET_OVERHEAD_S = 3.0
FIRST_METRIC_TIMEOUT_S = 300
USER = """
import json
from django.contrib.auth import get_user_model
get_user_model().objects.create_user("bench", password="bench-pass-123")
print(json.dumps({"ok": True}))
"""


SMOKE: dict = {}  # --smoke: SMOKE_SETTINGS


def bench_config(model: str, pool: str = "default") -> dict:
    from worker.trainer.config import PRESETS

    # One step is enough: the first metric comes before it; the run is cancelled right after.
    return {**PRESETS["cpu-demo"], **SMOKE, "model": model, "max_steps": 2, "worker_pool": pool}


RAY_POOL = "ray"


# --------------------------------------------------------------------------- the product
class Product:
    def __init__(self, work: Path, model: str, ray: bool = False):
        """`ray`: a second worker, on pool RAY_POOL, whose runs a Ray cluster of one node places."""
        self.model, self.ray = model, ray
        self.server = AsgiServer(work / "control-plane", env={"WORKER_LOG_LINES_PER_S": "50"})
        self.worker = self.ray_worker = self.cluster = None
        self.cluster_start_s: float | None = None

    def __enter__(self):
        self.server.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.server.start()
        self.server.shell_json(USER)
        self.client = logged_in_client(self.server, "bench", "bench-pass-123")
        self.client.headers["X-CSRFToken"] = self.client.cookies["csrftoken"]
        self.worker = self._start_worker("default", self.server.env)
        if self.ray:
            self._start_ray_worker()
        self.dataset, self.reward = self._library()
        return self

    def __exit__(self, *exc):
        from tests.support.celery_worker import stop_worker

        for worker in (self.worker, self.ray_worker):
            if worker is not None:
                stop_worker(worker)
        if self.cluster is not None:
            self.cluster.stop()
        self.server.stop()

    def _start_worker(self, pool: str, env: dict) -> subprocess.Popen:
        """A Celery worker, warm before any clock starts (as a worker waits in production)."""
        from tests.support.celery_worker import start_worker

        log = self.server.log_path.parent / f"worker-{pool}.log"
        worker = start_worker(self.server, pool, env=env, log_path=log)
        deadline = time.monotonic() + 60
        while "ready." not in (log.read_text() if log.exists() else ""):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Celery worker did not become ready:\n{log.read_text()[-2000:]}")
            time.sleep(0.2)
        return worker

    def _start_ray_worker(self) -> None:
        from tests.support.ray_cluster import TOKEN_AUTH, start_ray_cluster

        env = {**self.server.env, **TOKEN_AUTH}  # the cluster asks its token of whoever joins
        started = time.monotonic()
        self.cluster = start_ray_cluster(((1, 0),), env=env)
        self.cluster_start_s = time.monotonic() - started
        self.ray_worker = self._start_worker(RAY_POOL, {**env, "WORKER_RAY_ADDRESS": self.cluster.address})

    def _library(self) -> tuple[int, int]:
        dataset = self._post("/api/datasets/", {"name": "arith", "source": "generator", "generator": "arithmetic",
                                                "generator_params": {"count": 64, "difficulty": 1, "seed": 0}})
        reward = self._post("/api/reward-functions/", {"name": "accuracy", "kind": "builtin", "builtin": "accuracy"})
        return dataset["id"], reward["id"]

    def _post(self, path: str, body: dict) -> dict:
        response = self.client.post(path, json=body)
        if response.status_code >= 300:
            raise RuntimeError(f"POST {path} answered {response.status_code}: {response.text[:500]}")
        return response.json()

    def measure_once(self, index: int, pool: str = "default") -> dict:
        run = self._post("/api/runs/", {"name": f"overhead-{pool}-{index}", "dataset": self.dataset,
                                        "rewards": [{"reward_function": self.reward, "weight": 1.0}],
                                        "config": bench_config(self.model, pool)})
        arrivals = asyncio.run(self._watch_start(run["id"]))
        self.client.post(f"/api/runs/{run['id']}/cancel/")
        self._wait_until_finished(run["id"])
        arrivals["vllm_health_s"] = self._vllm_seconds(run["id"])
        arrivals["placement_s"] = self._placement_seconds(run["id"])
        return arrivals

    def _placement_seconds(self, run_id: int) -> float | None:
        """From the worker taking the run to its machine placed, by the run's log (Ray runs only)."""
        from datetime import datetime

        logs = self.client.get(f"/api/runs/{run_id}/logs/", params={"page_size": 1000}).json()["results"]
        at = {prefix: datetime.fromisoformat(line["time"]) for line in reversed(logs)
              for prefix in ("worker received run", "placed on machine") if line["message"].startswith(prefix)}
        if len(at) < 2:
            return None
        return (at["placed on machine"] - at["worker received run"]).total_seconds()

    async def _watch_start(self, run_id: int) -> dict:
        url = self.server.url.replace("http", "ws") + f"/ws/runs/{run_id}/"
        cookie = "; ".join(f"{name}={value}" for name, value in self.client.cookies.items())
        async with websockets.connect(url, additional_headers={"Cookie": cookie, "Origin": "http://127.0.0.1"}) as ws:
            started = time.monotonic()
            response = await asyncio.to_thread(self.client.post, f"/api/runs/{run_id}/start/")
            if response.status_code != 200:
                raise RuntimeError(f"start answered {response.status_code}: {response.text[:500]}")
            seen = {"api_answered_s": time.monotonic() - started}
            while True:
                message = json.loads(await asyncio.wait_for(ws.recv(), FIRST_METRIC_TIMEOUT_S))
                at = time.monotonic() - started
                payload = message.get("payload", {})
                if message["type"] == "run.status":
                    seen.setdefault(f"status_{payload.get('status')}_s", at)
                    if payload.get("status") in ("failed", "cancelled", "lost"):
                        raise RuntimeError(f"run {run_id} ended {payload.get('status')}: {payload.get('message')}")
                if message["type"] == "run.metrics":
                    seen["first_metric_s"] = at
                    seen["setup"] = metric_values(payload)
                    return seen

    def _wait_until_finished(self, run_id: int, timeout_s: float = 120) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.client.get(f"/api/runs/{run_id}/").json()["status"] in ("cancelled", "succeeded", "failed"):
                return
            time.sleep(0.5)
        raise RuntimeError(f"run {run_id} did not stop within {timeout_s} s of its cancel")

    def _vllm_seconds(self, run_id: int) -> float | None:
        logs = self.client.get(f"/api/runs/{run_id}/logs/", params={"page_size": 1000}).json()["results"]
        for line in logs:
            if line["message"].startswith("vLLM answered /health "):
                return float(line["message"].split()[3])
        return None


def metric_values(payload: dict) -> dict:
    """The setup/* values of a run.metrics message, whatever its exact layout."""
    values = {}
    points = payload.get("points") or payload.get("metrics") or payload
    if isinstance(points, dict):
        points = [points]
    for point in points if isinstance(points, list) else []:
        inner = point.get("values", point) if isinstance(point, dict) else {}
        values.update({k: v for k, v in inner.items() if isinstance(k, str) and k.startswith("setup/")})
    return values


# --------------------------------------------------------------------------- the peer
def measure_direct(work: Path, model: str, index: int, server_url: str | None = None) -> dict:
    """The trainer alone, starting its own vLLM (or using the one at `server_url`): process start to
    the setup metrics event."""
    from worker.trainer.config import TrainingConfig
    from worker.trainer.data.generators import generate

    output = work / f"direct-{index}"
    output.mkdir(parents=True)
    rows = output / "arith.jsonl"
    rows.write_text("".join(json.dumps(row) + "\n" for row in generate("arithmetic", {"count": 64, "difficulty": 1, "seed": 0})))
    spec = {"run_id": 0, "model": model, "output_dir": str(output),
            "dataset": {"kind": "file", "path": str(rows), "format": "jsonl", "prompt_column": "prompt"},
            "rewards": [{"name": "accuracy", "kind": "builtin", "builtin": "accuracy"}],
            "config": TrainingConfig(**bench_config(model)).model_dump()}
    if server_url:
        spec["inference_url"] = server_url
    spec_path = output / "spec.json"
    spec_path.write_text(json.dumps(spec))
    events = output / "events" / "events-trainer-1.jsonl"
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "worker.trainer", "--spec", str(spec_path)], cwd=ROOT,
                            stdout=(output / "trainer.log").open("wb"), stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        while time.monotonic() - started < FIRST_METRIC_TIMEOUT_S:
            setup = first_setup_metrics(events)
            if setup is not None:
                return {"first_metric_s": time.monotonic() - started, "setup": setup,
                        "vllm_health_s": vllm_seconds_from_events(events)}
            if proc.poll() is not None:
                raise RuntimeError(f"the trainer exited with {proc.returncode}:\n"
                                   f"{(output / 'trainer.log').read_text()[-3000:]}")
            time.sleep(0.05)
        raise RuntimeError("no setup metrics from the direct trainer in time")
    finally:
        stop_process_group(proc, grace_s=20)


def first_setup_metrics(events: Path) -> dict | None:
    if not events.exists():
        return None
    for line in events.read_text().splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line being written
        values = event.get("values", {}) if event.get("type") == "metrics" else {}
        if any(name.startswith("setup/") for name in values):
            return values
    return None


def vllm_seconds_from_events(events: Path) -> float | None:
    for line in events.read_text().splitlines():
        try:
            message = json.loads(line).get("message", "")
        except json.JSONDecodeError:
            continue  # a line being written
        if message.startswith("vLLM ready "):  # "vLLM ready 23.4 s after it started, at ..."
            return float(message.split()[2])
    return None


# --------------------------------------------------------------------------- the report
def not_loading_s(measure: dict) -> float | None:
    """Time to first metric minus the trainer's start-to-ready time (see the module's doc)."""
    setup = measure["setup"]
    if "setup/process_s" not in setup or "setup/setup_s" not in setup:
        return None
    return measure["first_metric_s"] - (setup["setup/process_s"] + setup["setup/setup_s"])


def report_ray(product: list[dict], placed: list[dict], cluster_start_s: float | None) -> None:
    """The engine's cost: the product's runs placed by Ray against the same product's own worker."""
    if not placed:
        return
    product_rest, placed_rest = median(map(not_loading_s, product)), median(map(not_loading_s, placed))
    print(f"\nWith and without the cluster engine (median, seconds; the one-node Ray cluster took "
          f"{fmt(cluster_start_s)} s to start, once)\n")
    print(markdown_table(rows=[
        ("start -> first metric", fmt(median(p["first_metric_s"] for p in product)),
         fmt(median(p["first_metric_s"] for p in placed))),
        ("worker took the run -> placed on a machine", "—", fmt(median(p["placement_s"] for p in placed))),
        ("vLLM spawn -> /health (loading)", fmt(median(p["vllm_health_s"] for p in product)),
         fmt(median(p["vllm_health_s"] for p in placed))),
        ("not loading = control-plane overhead", fmt(product_rest), fmt(placed_rest)),
    ], header=("measure", "product (its worker runs it)", "placed by Ray")))
    if product_rest is not None and placed_rest is not None:
        print(f"\nPlaced by Ray, a run spends {placed_rest - product_rest:+.1f} s more besides loading")


def report(product: list[dict], direct: list[dict]) -> None:
    product_rest, direct_rest = median(map(not_loading_s, product)), median(map(not_loading_s, direct))
    met = "—" if product_rest is None else ("yes" if product_rest <= TARGET_OVERHEAD_S else "NO")
    print("\nTime to the first metric (median of each side's runs, seconds)\n")
    print(markdown_table(rows=[
        ("start -> first metric", fmt(median(p["first_metric_s"] for p in product)),
         fmt(median(d["first_metric_s"] for d in direct)), "", "", ""),
        ("vLLM spawn -> /health (loading)", fmt(median(p["vllm_health_s"] for p in product)),
         fmt(median(d["vllm_health_s"] for d in direct)), "", "", ""),
        ("not loading = control-plane overhead", fmt(product_rest), fmt(direct_rest),
         fmt(product_rest / direct_rest) if product_rest and direct_rest else "—", f"<= {TARGET_OVERHEAD_S:.0f} s", met),
    ], header=("measure", "product", "direct (peer)", "ratio", "target", "met?")))
    print("\nThe product's path, phase by phase (median; from websocket arrival times and the setup metrics)\n")
    setup = lambda name: median(p["setup"].get(f"setup/{name}") for p in product)  # noqa: E731
    print(markdown_table(rows=[
        ("POST start answered (commit, queued)", fmt(median(p["api_answered_s"] for p in product))),
        ("status `starting` on the websocket (worker took the message)", fmt(median(p.get("status_starting_s") for p in product))),
        ("vLLM: spawn to /health (in parallel with the trainer)", fmt(median(p["vllm_health_s"] for p in product))),
        ("trainer: process start to setup (imports)", fmt(setup("process_s"))),
        ("trainer: model, optimizer loaded", fmt(setup("load_s"))),
        ("trainer: then waited for vLLM", fmt(setup("inference_wait_s"))),
        ("first metric on the websocket", fmt(median(p["first_metric_s"] for p in product))),
    ], header=("phase", "seconds")))
    print("\nEvery run: first metric / not loading (s): product",
          [f"{p['first_metric_s']:.1f}/{fmt(not_loading_s(p))}" for p in product],
          "direct", [f"{d['first_metric_s']:.1f}/{fmt(not_loading_s(d))}" for d in direct])
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")


def default_model() -> str:
    from worker.trainer.config import DEFAULT_MODEL
    from worker.trainer.models.paths import resolve_model_path

    path = resolve_model_path(DEFAULT_MODEL, base=ROOT / "var")
    if not Path(path).is_dir():
        raise SystemExit(f"{DEFAULT_MODEL} is not prepared under var/models: run `make trainer-stack` first")
    return path


def allow_model_folder(folder: Path) -> None:
    """Lists `folder` in MODEL_DIRS for the control plane, worker and trainers started after this, so
    that a run may name the smoke run's tiny model by path (worker/trainer/models/paths.py)."""
    listed = [part for part in os.environ.get("MODEL_DIRS", "").split(",") if part]
    os.environ["MODEL_DIRS"] = ",".join(dict.fromkeys([*listed, str(folder)]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=None, help="runs on each side (default 3, smoke 1)")
    parser.add_argument("--model", help="model directory (default: the prepared SmolLM2-135M-Instruct)")
    parser.add_argument("--ray", action="store_true", help="also runs placed by a one-node Ray cluster")
    add_smoke_options(parser, serves=True)
    args = parser.parse_args(argv)
    refuse_server_url_without_smoke(parser, args)
    args.repeats = args.repeats or (1 if args.smoke else 3)
    SMOKE.clear()
    if args.smoke:
        SMOKE.update(SMOKE_SETTINGS)
        args.model = tiny_model()
    model = args.model or default_model()
    if Path(model).is_dir():  # a run names a model by path only inside MODEL_DIRS (worker/trainer/models/paths.py)
        allow_model_folder(Path(model).parent)
    print(f"model {model}; {args.repeats} run(s) each side; load average before: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as tmp:
        work = Path(tmp)
        direct, product, placed = [], [], []
        with Product(work, model, ray=args.ray) as plane:
            for index in range(args.repeats):
                # Alternate the sides so that a slow spell of the machine hits both.
                direct.append(measure_direct(work, model, index, args.server_url))
                print(f"  direct  #{index + 1}: {direct[-1]['first_metric_s']:.2f} s", flush=True)
                product.append(plane.measure_once(index))
                print(f"  product #{index + 1}: {product[-1]['first_metric_s']:.2f} s", flush=True)
                if args.ray:
                    placed.append(plane.measure_once(index, RAY_POOL))
                    print(f"  placed by Ray #{index + 1}: {placed[-1]['first_metric_s']:.2f} s", flush=True)
            cluster_start_s = plane.cluster_start_s
    report(product, direct)
    report_ray(product, placed, cluster_start_s)


if __name__ == "__main__":
    main()
