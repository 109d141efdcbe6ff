"""LoRA against full fine-tuning of SmolLM2-135M on this machine: seconds a training step,
seconds a weight sync into a real vLLM server, the trainer's peak memory, a checkpoint's size.

    .venv/bin/python -m bench.lora [--steps 8] [--syncs 5]

Each mode runs in a process of its own (its peak RSS is its own): the real `train_step` of the
cpu-demo preset on bench/train_step.py's synthetic groups, then a checkpoint, then a vLLM server
for the same config and `--syncs` weight syncs into it (full: the model's file and reload;
LoRA: the adapter, loaded in place). Nothing is asserted: the script prints one table.
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

MODES = ("full", "lora")


def build(mode: str, steps: int):
    from worker.trainer import setup
    from worker.trainer.config import PRESETS, TrainingConfig
    from worker.trainer.models.prepare import prepare_default_model

    config = TrainingConfig(**{**PRESETS["cpu-demo"], "model": "default", "lora": mode == "lora", "max_steps": steps})
    model_dir = str(prepare_default_model().path)
    parts = setup.build_training_parts(model_dir, config)
    ctx = parts.step_context(config)
    return config, model_dir, parts, ctx


def train(ctx, config, steps: int) -> list[float]:
    import random

    from bench.train_step import PROMPTS_PER_STEP, synthetic_group
    from worker.trainer.step import batch_advantages, train_step

    rng, seconds = random.Random(0), []
    for step in range(steps):
        groups = [synthetic_group(rng, step * PROMPTS_PER_STEP + i) for i in range(PROMPTS_PER_STEP)]
        started = time.perf_counter()
        train_step(ctx, groups, batch_advantages(groups, config.num_generations, config.scale_rewards))
        seconds.append(time.perf_counter() - started)
        print(f"  {step + 1}: {seconds[-1]:.2f} s", file=sys.stderr, flush=True)
    return seconds


def checkpoint_mb(parts, folder: Path) -> float:
    from worker.trainer.checkpoints import TrainerState, checkpoint_size, save_checkpoint

    path = save_checkpoint(folder, TrainerState(step=1, model_version=1, data_position=0), parts.unwrapped_model(),
                           parts.tokenizer, parts.optimizer, parts.scheduler)
    return checkpoint_size(path) / 2 ** 20


def sync_seconds(config, model_dir: str, parts, syncs: int, folder: Path) -> list[float]:
    from worker.trainer.inference.server import VLLMServer
    from worker.trainer.weight_sync import make_weight_sync

    with VLLMServer.for_config(model_dir, config, log_path=folder / "vllm.log") as server:
        server.wait_until_healthy()
        backend = "lora_adapter" if config.lora else "filesystem"
        sync = make_weight_sync(backend, server.url, folder)
        try:
            return [sync.push(parts.served_model(), version) for version in range(1, syncs + 1)]
        finally:
            sync.close()


def child(mode: str, steps: int, syncs: int) -> dict:
    from bench.train_step import peak_gib

    config, model_dir, parts, ctx = build(mode, steps)
    seconds = train(ctx, config, steps)
    with tempfile.TemporaryDirectory() as folder:
        size = checkpoint_mb(parts, Path(folder))
        peak = peak_gib()  # before vLLM: the trainer's own
        pushes = sync_seconds(config, model_dir, parts, syncs, Path(folder))
    return {"step_s": statistics.median(seconds[2:] or seconds), "peak_gib": peak, "checkpoint_mb": size,
            "sync_s": statistics.median(pushes[1:] or pushes), "sync_max_s": max(pushes[1:] or pushes)}


def measure(mode: str, steps: int, syncs: int) -> dict:
    print(f"{mode}:", file=sys.stderr, flush=True)
    done = subprocess.run([sys.executable, "-m", "bench.lora", "--child", mode, "--steps", str(steps),
                           "--syncs", str(syncs)], cwd=Path(__file__).resolve().parents[1],
                          stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(results: dict[str, dict]) -> str:
    full = results["full"]
    header = ("mode", "s a step (median)", "vs full", "weight sync s (median / max)", "vs full", "peak RSS GiB",
              "checkpoint MB")
    rows = [(mode, f"{r['step_s']:.2f}", f"{r['step_s'] / full['step_s']:.2f}x",
             f"{r['sync_s']:.3f} / {r['sync_max_s']:.3f}", f"{r['sync_s'] / full['sync_s']:.2f}x",
             f"{r['peak_gib']:.2f}", f"{r['checkpoint_mb']:.1f}") for mode, r in results.items()]
    return markdown_table(header, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--syncs", type=int, default=5)
    parser.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.steps, args.syncs)))
        return
    results = {mode: measure(mode, args.steps, args.syncs) for mode in MODES}
    print(f"LoRA (r=16, attention and MLP) against full fine-tuning, SmolLM2-135M, cpu-demo preset, "
          f"{args.steps} steps, {args.syncs} syncs")
    print(table(results))


if __name__ == "__main__":
    main()
