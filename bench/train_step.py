"""The training step alone: peak memory and seconds a step for shape paddings and oneDNN
primitive-cache sizes.

    .venv/bin/python -m bench.train_step                         # 20 steps: oneDNN's cache, shapes padded to 1 and 32
    .venv/bin/python -m bench.train_step --steps 30 --capacities 1024 256 128 64 --widths 1
    .venv/bin/python -m bench.train_step --smoke     # a tiny model, 2 steps, nothing padded, in this process

No vLLM, no rollout: the real `train_step` (worker/trainer/training/step.py) of the cpu-demo preset
(SmolLM2-135M prepared under var/models, micro-batches of 2, 16 completions a step) on
synthetic GSM8K-sized groups: 2 prompts of 110 random tokens x 8 completions of 100-128,
the same groups for every run. Each cache size and padding runs in its own process with the
trainer's allocator (jemalloc where found) and `ONEDNN_PRIMITIVE_CACHE_CAPACITY` set; 1024
(oneDNN's own default) without padding is the peer. `--widths` pads packed rows, and the
positions fed to the vocabulary projection, to a multiple of each (what
worker/trainer/onednn_cache.shape_multiple_for picks; 1 = no padding). The
precision is the trainer's (bf16 where it is fast: worker/trainer/training/precision.py); in fp32 the
matmuls go through MKL and the cache plays no part.

Nothing is asserted: the script prints one table.
"""
import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from bench.report import markdown_table
from bench.smoke import add_smoke_options, smoke_settings
from worker.trainer.training.onednn_cache import CPU_BF16_SHAPE_MULTIPLE, DEFAULT_CAPACITY, SETTING


@dataclass(frozen=True)
class StepShape:
    """The groups of one synthetic step: GSM8K-sized for the cpu-demo preset, a few tokens for a smoke run."""
    prompts: int = 2
    generations: int = 8
    prompt_tokens: int = 110
    completion_tokens: tuple[int, int] = (100, 128)


DEMO_SHAPE = StepShape()
SMOKE_SHAPE = StepShape(prompts=1, generations=2, prompt_tokens=16, completion_tokens=(8, 16))
SMOKE_BATCHES = {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 1}  # SMOKE_SHAPE's 2 completions


def synthetic_group(rng: random.Random, index: int, shape: StepShape = DEMO_SHAPE):
    from worker.trainer.rollout.groups import Completion, Group

    prompt = [rng.randrange(1000, 40000) for _ in range(shape.prompt_tokens)]
    completions = []
    for _ in range(shape.generations):
        length = rng.randint(*shape.completion_tokens)
        completions.append(Completion([rng.randrange(1000, 40000) for _ in range(length)], [-1.0] * length,
                                      "", "length"))
    group = Group(index, "", prompt, {}, completions, model_version=0)
    group.totals = [float(rng.random() < 0.5) for _ in range(shape.generations)]
    return group


def synthetic_step(rng: random.Random, step: int, shape: StepShape = DEMO_SHAPE) -> list:
    """The groups of training step `step` (from 0), numbered on from the previous steps'."""
    return [synthetic_group(rng, step * shape.prompts + i, shape) for i in range(shape.prompts)]


def peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20  # KiB on Linux


def child(steps: int, shape_multiple: int, smoke: bool = False) -> dict:
    """Runs in the measured process: load, then `steps` training steps (of the cpu-demo preset's
    micro-batches; a smoke run's on the tiny model)."""
    from worker.trainer.training import setup
    from worker.trainer.config import PRESETS, TrainingConfig
    from worker.trainer.models.prepare import prepare_default_model
    from worker.trainer.training.step import batch_advantages, train_step

    shape = SMOKE_SHAPE if smoke else DEMO_SHAPE
    if smoke:
        config = TrainingConfig(**smoke_settings(PRESETS["cpu-demo"], **SMOKE_BATCHES))
    else:
        config = TrainingConfig(**{**PRESETS["cpu-demo"], "model": "default"})
    parts = setup.build_training_parts(config.model if smoke else str(prepare_default_model().path), config)
    ctx = parts.step_context(config, shape_multiple=shape_multiple)
    rng = random.Random(0)
    seconds, peaks = [], []
    for step in range(steps):
        groups = synthetic_step(rng, step, shape)
        started = time.perf_counter()
        train_step(ctx, groups, batch_advantages(groups, shape.generations, config.scale_rewards))
        seconds.append(time.perf_counter() - started)
        peaks.append(peak_gib())
        print(f"  step {step + 1}: {seconds[-1]:.1f} s, peak {peaks[-1]:.2f} GiB", file=sys.stderr, flush=True)
    return {"seconds": seconds, "peaks": peaks, "bf16": parts.accelerator.mixed_precision == "bf16"}


def measure(capacity: int, shape_multiple: int, steps: int, smoke: bool = False) -> dict:
    """One setting in a process of its own with the cache's capacity set; a smoke run's in this one
    (the capacity and allocator left as they are: its figures mean nothing)."""
    if smoke:
        return child(steps, shape_multiple, smoke)
    from worker.trainer.processes.allocator import chosen_library, preload_environment

    environ = {**os.environ, SETTING: str(capacity)}
    library = chosen_library(environ)
    if library:
        environ = preload_environment(library, environ) or environ
    print(f"capacity {capacity}, shapes padded to a multiple of {shape_multiple}:", file=sys.stderr, flush=True)
    done = subprocess.run([sys.executable, "-m", "bench.train_step", "--child", "--steps", str(steps),
                           "--widths", str(shape_multiple)], env=environ, cwd=Path(__file__).resolve().parents[1],
                          stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(results: dict[tuple[int, int], dict], steps: int) -> str:
    marks = sorted({min(2, steps), min(steps, max(2, steps // 2)), steps})
    settled = slice(min(10, steps // 3), steps)  # past the first steps, which fill the cache
    base = results.get((DEFAULT_CAPACITY, 1))
    header = ("capacity", "shapes padded to", f"peak RSS GiB after {' / '.join(map(str, marks))} steps",
              f"s a step (steps {settled.start + 1}-{steps})", "vs 1024, unpadded")
    rows = []
    for (capacity, shape_multiple), result in results.items():
        peaks = " / ".join(f"{result['peaks'][mark - 1]:.2f}" for mark in marks)
        mean = sum(result["seconds"][settled]) / len(result["seconds"][settled])
        ratio = f"{mean / (sum(base['seconds'][settled]) / len(base['seconds'][settled])):.2f}x" if base else "—"
        chosen = " (the trainer's)" if (capacity, shape_multiple) == (DEFAULT_CAPACITY, CPU_BF16_SHAPE_MULTIPLE) else ""
        rows.append((capacity, f"{shape_multiple}{chosen}", peaks, f"{mean:.2f}", ratio))
    return markdown_table(header, rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=None, help="default 20, smoke 2")
    parser.add_argument("--capacities", type=int, nargs="+", default=[DEFAULT_CAPACITY])
    parser.add_argument("--widths", type=int, nargs="+", default=None,
                        help=f"default 1 {CPU_BF16_SHAPE_MULTIPLE}, smoke 1")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    add_smoke_options(parser)
    args = parser.parse_args(argv)
    args.steps = args.steps or (2 if args.smoke else 20)
    args.widths = args.widths or ([1] if args.smoke else [1, CPU_BF16_SHAPE_MULTIPLE])
    if args.child:
        print(json.dumps(child(args.steps, args.widths[0], args.smoke)))
        return
    results = {(capacity, width): measure(capacity, width, args.steps, args.smoke)
               for capacity in args.capacities for width in args.widths}
    precision = "bf16" if next(iter(results.values()))["bf16"] else "fp32 (the cache plays no part)"
    print(f"train_step alone, cpu-demo preset, {args.steps} steps, {precision}, {os.cpu_count()} cores")
    print(table(results, args.steps))


if __name__ == "__main__":
    main()
