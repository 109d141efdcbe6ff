"""LoRA against full fine-tuning of SmolLM2-135M on this machine: seconds a training step,
seconds a weight sync into a real vLLM server, the server's decoding speed, the trainer's peak
memory, a checkpoint's size.

    .venv/bin/python -m bench.lora [--steps 8] [--syncs 5]
    .venv/bin/python -m bench.lora --smoke      # a tiny model, 1 step, 1 sync a mode (bench/smoke.py)

Each mode runs in a process of its own (its peak RSS is its own): the real `train_step` of the
cpu-demo preset on bench/train_step.py's synthetic groups, then a checkpoint, then a vLLM server
for the same config, `--syncs` weight syncs into it (full and lora-merged: the model's file and
reload; lora: the adapter, loaded in place), and the server's decoding speed for what rollouts
name (the base model, or the adapter): the two sides of the lora_serving knob. Nothing is
asserted: the script prints one table.

`--smoke` runs every mode in this process on a tiny model; with `--server-url URL` every mode
pushes into the server at URL, which must serve bench/smoke.py's tiny model with LoRA enabled
(smoke_server_config() does).
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.report import markdown_table
from bench.smoke import add_smoke_options, refuse_server_url_without_smoke, smoke_settings, vllm_server
from bench.train_step import DEMO_SHAPE, SMOKE_BATCHES, SMOKE_SHAPE, StepShape, synthetic_step

# full fine-tuning; LoRA with the adapter served alone; LoRA with merged weights served (lora_serving)
MODES = {"full": {}, "lora": {"lora": True, "lora_serving": "adapter"},
         "lora-merged": {"lora": True, "lora_serving": "merged"}}


def build(mode: str, steps: int, smoke: bool = False):
    from worker.trainer.training import setup
    from worker.trainer.config import PRESETS, TrainingConfig
    from worker.trainer.models.prepare import prepare_default_model

    preset = smoke_settings(PRESETS["cpu-demo"], **SMOKE_BATCHES) if smoke else {**PRESETS["cpu-demo"], "model": "default"}
    config = TrainingConfig(**{**preset, **MODES[mode], "max_steps": steps})
    model_dir = config.model if smoke else str(prepare_default_model().path)
    parts = setup.build_training_parts(model_dir, config)
    ctx = parts.step_context(config)
    return config, model_dir, parts, ctx


def train(ctx, config, steps: int, shape: StepShape = DEMO_SHAPE) -> list[float]:
    import random

    from worker.trainer.training.step import batch_advantages, train_step

    rng, seconds = random.Random(0), []
    for step in range(steps):
        groups = synthetic_step(rng, step, shape)
        started = time.perf_counter()
        train_step(ctx, groups, batch_advantages(groups, config.num_generations, config.scale_rewards))
        seconds.append(time.perf_counter() - started)
        print(f"  {step + 1}: {seconds[-1]:.2f} s", file=sys.stderr, flush=True)
    return seconds


def checkpoint_mb(parts, folder: Path) -> float:
    from worker.trainer.checkpoints.saving import TrainerState, checkpoint_size, save_checkpoint

    path = save_checkpoint(folder, TrainerState(step=1, model_version=1, data_position=0), parts.unwrapped_model(),
                           parts.tokenizer, parts.optimizer, parts.scheduler)
    return checkpoint_size(path) / 2 ** 20


def generation_tokens_per_s(server, model_name: str, sequences: int = 16, tokens: int = 64) -> float:
    """Decoding speed of what the run's rollouts name: the base model, or the LoRA adapter."""
    import httpx

    started = time.perf_counter()
    response = httpx.post(f"{server.url}/v1/completions", timeout=900, json={
        "model": model_name, "prompt": ["Count to one hundred: 1, 2,"] * sequences, "max_tokens": tokens,
        "temperature": 1.0, "ignore_eos": True})
    response.raise_for_status()
    return sequences * tokens / (time.perf_counter() - started)


def serve(config, model_dir: str, parts, syncs: int, folder: Path, server_url: str | None = None,
          tokens: int = 64) -> dict:
    """Weight syncs into a real server (their seconds and each one's write), then its decoding speed."""
    from worker.trainer.weight_sync.backends import make_weight_sync
    from worker.trainer.weight_sync.lora_adapter import ADAPTER_NAME

    with vllm_server(model_dir, config, folder / "vllm.log", server_url) as server:
        adapter = config.lora_serving == "adapter" and config.lora
        backend = "lora_adapter" if adapter else "filesystem"
        sync = make_weight_sync(backend, server.url, folder)
        pushes, writes = [], []
        try:
            for version in range(1, syncs + 1):
                pushes.append(sync.push(parts.served_model(), version))
                writes.append(sync.last_push_parts().get("write", 0.0))
        finally:
            sync.close()
        served = ADAPTER_NAME if adapter else server.served_model_name
        return {"pushes": pushes, "writes": writes,
                "tokens_per_s": generation_tokens_per_s(server, served, tokens=tokens)}


def child(mode: str, args) -> dict:
    from bench.train_step import peak_gib

    config, model_dir, parts, ctx = build(mode, args.steps, args.smoke)
    seconds = train(ctx, config, args.steps, SMOKE_SHAPE if args.smoke else DEMO_SHAPE)
    with tempfile.TemporaryDirectory() as folder:
        size = checkpoint_mb(parts, Path(folder))
        peak = peak_gib()  # before vLLM: the trainer's own
        served = serve(config, model_dir, parts, args.syncs, Path(folder), args.server_url,
                       tokens=8 if args.smoke else 64)
    pushes, writes = served["pushes"][1:] or served["pushes"], served["writes"][1:] or served["writes"]
    return {"step_s": statistics.median(seconds[2:] or seconds), "peak_gib": peak, "checkpoint_mb": size,
            "sync_s": statistics.median(pushes), "sync_max_s": max(pushes), "write_s": statistics.median(writes),
            "tokens_per_s": served["tokens_per_s"]}


def measure(mode: str, args) -> dict:
    """One mode in a process of its own (its peak RSS its own); a smoke run's in this one, whose
    figures mean nothing anyway."""
    print(f"{mode}:", file=sys.stderr, flush=True)
    if args.smoke:
        return child(mode, args)
    done = subprocess.run([sys.executable, "-m", "bench.lora", "--child", mode, "--steps", str(args.steps),
                           "--syncs", str(args.syncs)], cwd=Path(__file__).resolve().parents[1],
                          stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(results: dict[str, dict]) -> str:
    full = results["full"]
    header = ("mode", "s a step (median)", "vs full", "weight sync s (median / max)", "of which write", "vs full",
              "generation tokens/s", "vs full", "peak RSS GiB", "checkpoint MB")
    rows = [(mode, f"{r['step_s']:.2f}", f"{r['step_s'] / full['step_s']:.2f}x",
             f"{r['sync_s']:.3f} / {r['sync_max_s']:.3f}", f"{r['write_s']:.3f}", f"{r['sync_s'] / full['sync_s']:.2f}x",
             f"{r['tokens_per_s']:.0f}", f"{r['tokens_per_s'] / full['tokens_per_s']:.2f}x",
             f"{r['peak_gib']:.2f}", f"{r['checkpoint_mb']:.1f}") for mode, r in results.items()]
    return markdown_table(header, rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=None, help="default 8, smoke 1")
    parser.add_argument("--syncs", type=int, default=None, help="default 5, smoke 1")
    parser.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    add_smoke_options(parser, serves=True)
    args = parser.parse_args(argv)
    refuse_server_url_without_smoke(parser, args)
    args.steps = args.steps or (1 if args.smoke else 8)
    args.syncs = args.syncs or (1 if args.smoke else 5)
    if args.child:
        print(json.dumps(child(args.child, args)))
        return
    results = {mode: measure(mode, args) for mode in MODES}
    model = "a tiny random Llama (smoke)" if args.smoke else "SmolLM2-135M"
    print(f"LoRA (r=16, attention and MLP) against full fine-tuning, {model}, cpu-demo preset, "
          f"{args.steps} steps, {args.syncs} syncs")
    print(table(results))


if __name__ == "__main__":
    main()
