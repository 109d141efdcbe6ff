"""Does the default CPU demo learn? SmolLM2-135M on the built-in arithmetic generator, accuracy + format.

    .venv/bin/python -m bench.learning                          # 15 minutes of training (the issue's measure)
    .venv/bin/python -m bench.learning --minutes 3              # a shorter look
    .venv/bin/python -m bench.learning --preset cpu-demo-lora   # the demo with a LoRA adapter

Prints the mean total reward of the first and last five steps and a held-out
accuracy (greedy, problems the run never sees) before and after training.
"""
import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path

from bench.report import markdown_table
from worker.trainer.config import PRESETS, TrainingConfig
from worker.trainer.data.generators import generate
from worker.trainer.rewards.builtins import build_builtin


HELD_OUT = 100
DIFFICULTY = 1
EXAMPLES = 1  # worked examples before each problem, as in the demo's dataset (runs/actions/demo.py)


def demo_spec(output_dir: Path, server_url: str, preset: str = "cpu-demo") -> dict:
    config = TrainingConfig(**{**PRESETS[preset], "max_steps": 100_000})
    return {
        "run_id": 0, "model": config.model, "output_dir": str(output_dir), "inference_url": server_url,
        "dataset": {"kind": "generator", "generator": "arithmetic",
                    "params": {"count": 5000, "difficulty": DIFFICULTY, "seed": 0, "examples": EXAMPLES}},
        "rewards": [{"name": "accuracy", "kind": "builtin", "builtin": "accuracy"},
                    {"name": "format", "kind": "builtin", "builtin": "format"}],
        "config": config.model_dump(),
    }


def completions(server, tokenizer, rows: list[dict], model_name: str | None = None, **sampling) -> list[str]:
    """The server's completions of each row's prompt through the chat template, row by row
    (`n` a row when sampling asks for more than one), from `model_name` (a LoRA adapter's)
    or the served model."""
    import httpx

    from worker.trainer.data.loading import render_prompt

    prompts = [render_prompt(row["prompt"], tokenizer) for row in rows]
    response = httpx.post(f"{server.url}/v1/completions", timeout=900,
                          json={"model": model_name or server.served_model_name, "prompt": prompts, **sampling})
    response.raise_for_status()
    return [c["text"] for c in sorted(response.json()["choices"], key=lambda c: c["index"])]


def demo_rewards(rows: list[dict], texts: list[str]) -> tuple[list[float], list[float]]:
    """The demo's accuracy and format rewards of each completion (as many a row as `texts` holds)."""
    per_row = len(texts) // len(rows)
    prompts = [row["prompt"] for row in rows for _ in range(per_row)]
    answers = [row["answer"] for row in rows for _ in range(per_row)]
    return (build_builtin("accuracy", {})(prompts, texts, answer=answers),
            build_builtin("format", {})(prompts, texts))


def held_out_accuracy(server, tokenizer, model_name: str | None = None) -> tuple[float, float]:
    """Greedy accuracy and format rate on problems from a seed the training data never uses."""
    rows = generate("arithmetic", {"count": HELD_OUT, "difficulty": DIFFICULTY, "seed": 987654, "examples": EXAMPLES})
    texts = completions(server, tokenizer, rows, model_name, max_tokens=128, temperature=0)
    accuracy, formatted = demo_rewards(rows, texts)
    return statistics.fmean(accuracy), statistics.fmean(formatted)


def step_metrics(events_file: Path) -> list[dict]:
    """The metrics of each training step, in step order (setup metrics left out)."""
    steps = {}
    for line in events_file.read_text().splitlines():
        event = json.loads(line)
        if event["type"] == "metrics" and "rollout/reward_mean" in event["values"]:
            steps[event["step"]] = event["values"]
    return [steps[step] for step in sorted(steps)]


def first_and_last_rows(steps: list[dict]) -> list[tuple[str, str, str]]:
    """Each reward function's mean and the policy's entropy, first five steps → last five: a run
    whose entropy collapses before the format reward ever pays shows here."""
    def first_and_last(key: str) -> str:
        values = [v[key] for v in steps if key in v]
        return f"{statistics.fmean(values[:5]):.2f} → {statistics.fmean(values[-5:]):.2f}" if values else "—"
    names = sorted(k.removeprefix("rollout/reward/").removesuffix("_mean")
                   for k in steps[0] if k.startswith("rollout/reward/") and k.endswith("_mean"))
    return [*((f"reward {name}, first → last 5 steps", first_and_last(f"rollout/reward/{name}_mean"), "")
              for name in names),
            ("entropy, first → last 5 steps", first_and_last("train/entropy"), "nats a token")]


def pipeline_rows(steps: list[dict], groups_per_step: int, skip: int = 5) -> list[tuple[str, str, str]]:
    """How the async pipeline ran after the first `skip` steps (start-up left out)."""
    steady = steps[skip:]
    if not steady:
        return []
    step_s = sum(v["system/step_time_s"] for v in steady)
    waited = sum(v["async/wait_for_rollouts_s"] for v in steady)
    expiring = sum(v.get("async/wait_for_expiring_s", 0.0) for v in steady)
    dropped = steady[-1]["async/dropped_stale"] - steps[skip - 1]["async/dropped_stale"]
    taken = dropped + groups_per_step * len(steady)
    syncs = [v["system/weight_sync_s"] for v in steady if v["system/weight_sync_s"] > 0]
    slowest = max(steady, key=lambda v: v["system/weight_sync_s"])
    slowest_parts = ", ".join(f"{name.removeprefix('system/weight_sync_').removesuffix('_s')} {value:.2f}"
                              for name, value in slowest.items()
                              if name.startswith("system/weight_sync_") and name != "system/weight_sync_s")
    return [
        (f"s per step (steps {skip + 1}-{len(steps)})", f"{step_s / len(steady):.1f}", ""),
        ("share of step time waiting for rollouts", f"{waited / step_s:.1%}",
         f"of which for groups about to expire {expiring / step_s:.1%}"),
        ("groups dropped stale / taken", f"{dropped:.0f} / {taken:.0f}", f"{dropped / taken:.1%}"),
        ("weight sync s mean / max", f"{statistics.fmean(syncs):.2f} / {max(syncs):.2f}" if syncs else "—",
         f"the slowest: {slowest_parts}" if syncs and slowest_parts else ""),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=15.0)
    parser.add_argument("--preset", choices=("cpu-demo", "cpu-demo-lora"), default="cpu-demo")
    args = parser.parse_args()

    from transformers import AutoTokenizer

    from worker.trainer.app import Trainer
    from worker.trainer.inference.server import VLLMServer
    from worker.trainer.models.paths import resolve_model_path
    from worker.trainer.models.prepare import prepare_default_model
    from worker.trainer.spec import LaunchSpec

    prepare_default_model()
    model_dir = resolve_model_path(TrainingConfig().model)
    config = TrainingConfig(**PRESETS[args.preset])
    output = Path(tempfile.mkdtemp(prefix="bench-learning-"))
    with VLLMServer.for_config(model_dir, config, log_path=output / "vllm.log") as server:
        server.wait_until_healthy()
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        before = held_out_accuracy(server, tokenizer)
        trainer = Trainer(LaunchSpec.model_validate(demo_spec(output, server.url, args.preset)))
        threading.Timer(args.minutes * 60, trainer.report.cancel_requested.set).start()
        started = time.monotonic()
        outcome = trainer.run()
        trained_s = time.monotonic() - started
        after = held_out_accuracy(server, tokenizer, trainer.served_name)  # a LoRA run's adapter
    steps = step_metrics(output / "events" / "events-trainer-1.jsonl")
    rewards = [values["rollout/reward_mean"] for values in steps]
    first, last = statistics.fmean(rewards[:5]), statistics.fmean(rewards[-5:])
    rows = [
        ("outcome", outcome, ""), ("steps trained", len(rewards), ""),
        ("wall time (min)", f"{trained_s / 60:.1f}", ""),
        ("mean reward, first 5 steps", f"{first:.3f}", ""), ("mean reward, last 5 steps", f"{last:.3f}", ""),
        ("reward gain", f"{last - first:+.3f}", "target ≥ +0.200: " + ("met" if last - first >= 0.2 else "MISSED")),
        ("held-out accuracy before → after", f"{before[0]:.2f} → {after[0]:.2f}", f"{HELD_OUT} problems, greedy"),
        ("held-out format rate before → after", f"{before[1]:.2f} → {after[1]:.2f}", ""),
        *first_and_last_rows(steps),
        *pipeline_rows(steps, config.completions_per_step // config.num_generations),
    ]
    print(f"\nbench.learning — {args.preset} preset, {args.minutes:g} min, output in {output}")
    print(markdown_table(("measure", "value", "note"), rows))


if __name__ == "__main__":
    main()
