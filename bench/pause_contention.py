"""What a paused vLLM server on the same CPU costs the work that starts right after the pause.

    .venv/bin/python -m bench.pause_contention                # vLLM's 1 s against ours (0.1 s), 4 pauses each
    .venv/bin/python -m bench.pause_contention --spins 1 0.1 0.3 --pauses 6
    .venv/bin/python -m bench.pause_contention --smoke        # a tiny model, 0.1 s, 1 pause (bench/smoke.py)

With `--smoke --server-url URL` the server at URL is paused instead, whatever its busy-wait.

vLLM's workers busy-wait for their next instruction for a while after each one (1 s in
vLLM 0.32); the trainer pauses generation when a training step starts
(worker/trainer/inference/time_slicing.py), so that wait lands on the step. For each
busy-wait setting (GRPO_VLLM_WORKER_SPIN_S, worker/trainer/inference/launch.py) a server on
SmolLM2-135M generates 16 completions for 3 s, is paused ("keep", as the trainer does), and
a fixed piece of training-like work (bf16 matmuls of a SmolLM2 layer's shape, both cores)
runs at once, then three times more. The peer is the same work with the server idle.

Nothing is asserted: the script prints one table.
"""
import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.report import markdown_table
from bench.smoke import RunningServer, add_smoke_options, refuse_server_url_without_smoke, tiny_model

GENERATING_S = 3  # how long the server generates before each pause


def fixed_work(x, w, repeats: int = 40) -> float:
    import torch

    started = time.perf_counter()
    for _ in range(repeats):
        torch.nn.functional.linear(x, w)
    return time.perf_counter() - started


def measure(spin: str, pauses: int, model_dir: str, x, w, server_url: str | None = None,
            generating_s: float = GENERATING_S) -> dict:
    """`server_url`: pause that server (started by someone else) instead of one started with `spin`."""
    if server_url:
        return pause_and_work(RunningServer(server_url.rstrip("/")), pauses, x, w, generating_s)

    from worker.trainer.config import PRESETS, TrainingConfig
    from worker.trainer.inference.launch import WORKER_SPIN_VARIABLE, build_launch, installed_device
    from worker.trainer.inference.server import VLLMServer, free_port

    config = TrainingConfig(**PRESETS["cpu-demo"])
    launch = build_launch(model_dir, config, port=free_port("127.0.0.1"), device=installed_device())
    launch.env[WORKER_SPIN_VARIABLE] = spin
    with tempfile.TemporaryDirectory() as work, \
            VLLMServer(launch, log_path=Path(work) / "vllm.log", startup_timeout_s=config.vllm_startup_timeout_s) as server:
        return pause_and_work(server, pauses, x, w, generating_s)


def pause_and_work(server, pauses: int, x, w, generating_s: float) -> dict:
    """The fixed work with the server idle, then right after each of `pauses` pauses of its generation."""
    import httpx

    from worker.trainer.inference.server_api import VllmAdminClient

    admin = VllmAdminClient(server.url)
    idle = min(fixed_work(x, w) for _ in range(3))
    first, later = [], []
    for _ in range(pauses):
        request = threading.Thread(target=lambda: httpx.post(f"{server.url}/v1/completions", timeout=600, json={
            "model": server.served_model_name, "prompt": "Count to 100:", "max_tokens": 128, "n": 16,
            "ignore_eos": True}))
        request.start()
        time.sleep(generating_s)
        admin.pause("keep")
        first.append(fixed_work(x, w))
        later.append(sum(fixed_work(x, w) for _ in range(3)))
        admin.resume()
        request.join()
    admin.close()
    return {"idle": idle, "first": statistics.mean(first), "later": statistics.mean(later)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spins", nargs="+", default=None, help="busy-wait seconds to compare (default 1 0.1, "
                                                                 "smoke 0.1)")
    parser.add_argument("--pauses", type=int, default=None, help="default 4, smoke 1")
    parser.add_argument("--model", default="HuggingFaceTB/SmolLM2-135M-Instruct")
    add_smoke_options(parser, serves=True)
    args = parser.parse_args(argv)
    refuse_server_url_without_smoke(parser, args)
    if args.server_url and args.spins:
        parser.error("--spins: the server at --server-url keeps the busy-wait it was started with")
    args.spins = args.spins or (["0.1"] if args.smoke else ["1", "0.1"])
    args.pauses = args.pauses or (1 if args.smoke else 4)

    import torch

    from worker.trainer.models.paths import resolve_model_path

    x, w = torch.randn(1024, 576, dtype=torch.bfloat16), torch.randn(1536, 576, dtype=torch.bfloat16)
    model_dir = tiny_model() if args.smoke else resolve_model_path(args.model)
    rows = {}
    for spin in args.spins:
        rows[spin] = measure(spin, args.pauses, model_dir, x, w, args.server_url, 0.5 if args.smoke else GENERATING_S)
        print(f"busy-wait {spin} s: done", file=sys.stderr)

    print(f"\nfixed work right after pausing a generating vLLM server, {args.pauses} pauses each\n")
    header = ("worker busy-wait", "work alone, server idle s", "first piece after the pause s", "next three s",
              "lost per pause s")
    print(markdown_table(header, [table_row(spin, row) for spin, row in rows.items()]))


def table_row(spin: str, row: dict) -> tuple:
    lost = row["first"] + row["later"] - 4 * row["idle"]
    label = f"{spin} s" + (" (vLLM's default)" if spin == "1" else "")
    return label, f"{row['idle']:.3f}", f"{row['first']:.3f}", f"{row['later']:.3f}", f"{lost:.2f}"


if __name__ == "__main__":
    main()
