"""Does the default CPU demo learn the task? SmolLM2-135M on the built-in arithmetic generator,
trained on accuracy + format and judged by its own evaluation (accuracy alone, greedy, on rows
held out of the training data).

    .venv/bin/python -m bench.learning                          # the preset's steps (60 for cpu-demo)
    .venv/bin/python -m bench.learning --steps 20               # a shorter look
    .venv/bin/python -m bench.learning --preset cpu-demo-lora   # the demo with a LoRA adapter
    .venv/bin/python -m bench.learning --set learning_rate=1e-5 temperature=1.0   # an experiment
    .venv/bin/python -m bench.learning --smoke                  # a tiny model, 2 steps (bench/smoke.py)

Prints the mean total reward of the first and last five steps, the run's held-out accuracy at
each evaluation (before the first step to after the last), the entropy at the end and what the
run's alarms watch (KL to the sampler, groups with all-equal rewards).
"""
import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bench.report import markdown_table
from bench.run_events import events_of, training_steps
from bench.smoke import add_smoke_options, refuse_server_url_without_smoke, smoke_settings, vllm_server
from bench.trainer import parse_settings
from worker.trainer.config import PRESETS, TrainingConfig

EXAMPLES = 1  # worked examples before each problem, as in the demo's dataset (runs/actions/demo.py)
SMOKE_EVAL_STEPS = 2
ENTROPY_TARGET = 0.05


def demo_spec(output_dir: Path, server_url: str, config: TrainingConfig) -> dict:
    return {
        "run_id": 0, "model": config.model, "output_dir": str(output_dir), "inference_url": server_url,
        "dataset": {"kind": "generator", "generator": "arithmetic",
                    "params": {"count": 5000, "difficulty": 1, "seed": 0, "examples": EXAMPLES}},
        "rewards": [{"name": "accuracy", "kind": "builtin", "builtin": "accuracy"},
                    {"name": "format", "kind": "builtin", "builtin": "format"}],
        "eval_rewards": [{"name": "accuracy", "kind": "builtin", "builtin": "accuracy"}],
        "config": config.model_dump(),
    }


def evaluations(events_file: Path) -> dict[int, dict]:
    """The eval/ metrics of each evaluation, by step."""
    return {event["step"]: event["values"] for event in events_of(events_file, "metrics")
            if "eval/pass@1" in event["values"]}


def watched_rows(steps: list[dict], config: TrainingConfig) -> list[tuple[str, str, str]]:
    """What the run's alarms watch (runs/alarms/), over the whole run."""
    entropy = [v["train/entropy"] for v in steps]
    kl = [v["train/kl_to_sampler"] for v in steps]
    equal = [v["rollout/frac_reward_zero_std"] for v in steps if "rollout/frac_reward_zero_std" in v]
    end = statistics.fmean(entropy[-5:])
    rows = [("entropy at the end (last 5 steps)", f"{end:.3f}",
             f"target > {ENTROPY_TARGET}: " + ("met" if end > ENTROPY_TARGET else "MISSED")),
            ("entropy min / step it first fell below 0.1",
             f"{min(entropy):.3f} / {next((i + 1 for i, e in enumerate(entropy) if e < 0.1), '—')}", "nats a token"),
            ("KL to the sampler max / steps above the alarm",
             f"{max(kl):.3f} / {sum(k > config.alarm_kl_to_sampler_max for k in kl)}",
             f"alarm_kl_to_sampler_max {config.alarm_kl_to_sampler_max}")]
    if equal:
        rows.append(("steps where every group had equal rewards", f"{sum(e == 1.0 for e in equal)} / {len(equal)}",
                     f"mean share of such groups {statistics.fmean(equal):.2f}"))
    return rows


def evaluation_rows(evals: dict[int, dict]) -> list[tuple[str, str, str]]:
    if not evals:
        return [("held-out accuracy", "—", "no evaluation reported")]
    ordered = sorted(evals)
    first, last = evals[ordered[0]]["eval/pass@1"], evals[ordered[-1]]["eval/pass@1"]
    examples = int(evals[ordered[0]]["eval/examples"])
    return [
        (f"held-out accuracy, step {ordered[0]} → {ordered[-1]}", f"{first:.2f} → {last:.2f}",
         f"{examples} held-out rows, greedy; gain {last - first:+.2f} (target ≥ +0.20: "
         + ("met)" if last - first >= 0.2 else "MISSED)")),
        ("held-out accuracy at each evaluation", ", ".join(f"{step}: {evals[step]['eval/pass@1']:.2f}"
                                                           for step in ordered), "step: pass@1"),
        ("evaluation seconds, mean", f"{statistics.fmean(e['eval/seconds'] for e in evals.values()):.1f}", ""),
    ]


def step_metrics(events_file: Path) -> list[dict]:
    """The metrics of each training step, every event of a step merged, in step order (set-up left out)."""
    return [merged["values"] for merged in training_steps(events_file).values()]


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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=None, help="steps to train; default the preset's")
    parser.add_argument("--preset", choices=("cpu-demo", "cpu-demo-lora"), default="cpu-demo")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="config changes (an experiment)")
    add_smoke_options(parser, serves=True)
    args = parser.parse_args(argv)
    refuse_server_url_without_smoke(parser, args)

    from worker.trainer.app import Trainer
    from worker.trainer.models.paths import resolve_model_path
    from worker.trainer.models.prepare import prepare_default_model
    from worker.trainer.spec import LaunchSpec

    preset = PRESETS[args.preset]
    if args.smoke:  # evaluated before the first step and after the last, as the preset's run is
        preset = smoke_settings(preset, eval_steps=SMOKE_EVAL_STEPS)
    else:
        prepare_default_model()
    settings = {**preset, **parse_settings(args.set)}
    if args.steps:
        settings["max_steps"] = args.steps
    config = TrainingConfig(**settings)
    model_dir = resolve_model_path(config.model)
    output = Path(tempfile.mkdtemp(prefix="bench-learning-"))
    with vllm_server(model_dir, config, output / "vllm.log", args.server_url) as server:
        trainer = Trainer(LaunchSpec.model_validate(demo_spec(output, server.url, config)))
        started = time.monotonic()
        outcome = trainer.run()
        trained_s = time.monotonic() - started
    events_file = output / "events" / "events-trainer-1.jsonl"
    steps = step_metrics(events_file)
    rewards = [values["rollout/reward_mean"] for values in steps]
    first, last = statistics.fmean(rewards[:5]), statistics.fmean(rewards[-5:])
    rows = [
        ("outcome", outcome, ""), ("steps trained", len(rewards), ""),
        ("wall time (min)", f"{trained_s / 60:.1f}", "set-up and evaluations included"),
        ("mean reward, first 5 steps", f"{first:.3f}", ""), ("mean reward, last 5 steps", f"{last:.3f}", ""),
        ("reward gain", f"{last - first:+.3f}", "target ≥ +0.200: " + ("met" if last - first >= 0.2 else "MISSED")),
        *evaluation_rows(evaluations(events_file)),
        *first_and_last_rows(steps),
        *watched_rows(steps, config),
        *pipeline_rows(steps, config.completions_per_step // config.num_generations),
    ]
    changed = " ".join(args.set) or "none"
    print(f"\nbench.learning — {args.preset} preset, {len(rewards)} steps, changes: {changed}, output in {output}")
    print(markdown_table(("measure", "value", "note"), rows))


if __name__ == "__main__":
    main()
