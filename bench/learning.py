"""Do the home page's demos learn? Each demo of runs/demos/definitions.py (the same dataset,
rewards, environment and config the button starts) trained over several seeds and judged by its
own evaluation: greedy, on problems held out of the training data.

    .venv/bin/python -m bench.learning                            # both demos, 3 seeds each, their 60 steps
    .venv/bin/python -m bench.learning --demo arithmetic --seeds 1
    .venv/bin/python -m bench.learning --demo arithmetic --set temperature=1.1 beta=0.02   # an experiment
    .venv/bin/python -m bench.learning --demo arithmetic --preset cpu-demo-lora           # with a LoRA adapter
    .venv/bin/python -m bench.learning --demo arithmetic --weight format=0.25            # a reward's weight
    .venv/bin/python -m bench.learning --demo arithmetic --dataset operators=+ --set eval_holdout_fraction=0.22
    .venv/bin/python -m bench.learning --smoke                    # a tiny model, 2 steps, one seed of each

Prints for each run the held-out accuracy at each evaluation with its 95% interval (Wilson), the
change first -> last with its interval (Newcombe's, for a difference of two proportions), the
entropy's minimum (on the mean of 5 steps in a row, which the 0.1 floor is judged on, and on one
step), the rewards and what the run's alarms watch; then for each demo the mean change over its
seeds with its interval against the target (+0.15 arithmetic, +0.5 tool use): met when the mean
reaches the target and its interval is above zero.
"""
import argparse
import math
import statistics
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import ValidationError

from bench.report import markdown_table
from bench.run_events import events_of, training_steps
from bench.smoke import add_smoke_options, refuse_server_url_without_smoke, smoke_settings, vllm_server
from bench.trainer import parse_settings
from runs.demos.definitions import DEMOS, DemoDefinition
from worker.trainer.data.generators import ArithmeticParams
from worker.trainer.config import PRESETS, TrainingConfig
from worker.trainer.metric_names import (EPISODE_TOOL_CALLS_MEAN, EVAL_EXAMPLES, EVAL_PASS_AT_1, EVAL_SECONDS,
                                         ROLLOUT_FRAC_REWARD_ZERO_STD, ROLLOUT_REWARD_FN_MEAN, TRAIN_ENTROPY,
                                         TRAIN_KL_TO_SAMPLER)

TARGETS = {"arithmetic": 0.15, "tool-use": 0.5}  # held-out accuracy gain, first evaluation to last
ENTROPY_FLOOR = 0.1  # nats a token, the whole run, on the mean of each ENTROPY_WINDOW steps in a row
# A step's entropy is its 16 completions' (two problems' in the demos): one step of two easy problems
# answered alike reads 0.09 and the next, with one long answer, 2.07. The floor is about a policy
# that stopped exploring, so it is judged on a window: 5 steps, 10 problems, 80 completions.
ENTROPY_WINDOW = 5
Z95 = 1.959964
SMOKE_EVAL_STEPS = 2
SMOKE_CHANGES = {"arithmetic": {}, "tool-use": {"max_turns": 2, "max_episode_tokens": 32}}


# --------------------------------------------------------------------------- intervals
def wilson(share: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion `share` of `n`: sound near 0 and 1, where the
    normal one runs past the ends (a run's first evaluation is often near 0)."""
    if n <= 0:
        return 0.0, 1.0
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def change_margins(first: float, n_first: int, last: float, n_last: int, z: float = Z95) -> tuple[float, float]:
    """How far below and above last - first its 95% interval reaches: Newcombe's hybrid score
    interval (his method 10, from each proportion's Wilson interval). The normal one is 0 wide
    at 0.00 -> 1.00, the tool-use demo's change, and runs past -1 and +1 near the ends."""
    first_low, first_high = wilson(first, n_first, z)
    last_low, last_high = wilson(last, n_last, z)
    return (math.hypot(last - last_low, first_high - first),
            math.hypot(last_high - last, first - first_low))


def change_interval(first: float, n_first: int, last: float, n_last: int, z: float = Z95) -> tuple[float, float]:
    """The 95% interval of the change last - first of two independent proportions."""
    below, above = change_margins(first, n_first, last, n_last, z)
    return last - first - below, last - first + above


@dataclass(frozen=True)
class Change:
    """One run's held-out accuracy, first evaluation to last."""
    first: float
    n_first: int
    last: float
    n_last: int

    @property
    def value(self) -> float:
        return self.last - self.first

    @property
    def margins(self) -> tuple[float, float]:
        return change_margins(self.first, self.n_first, self.last, self.n_last)


def mean_change(changes: list[Change]) -> tuple[float, float, float]:
    """(mean, low, high): the mean of the runs' changes, its interval from each evaluation's
    sampling noise (the runs independent): each side's margins added in quadrature, over runs."""
    mean = statistics.fmean(change.value for change in changes)
    below = math.sqrt(sum(change.margins[0] ** 2 for change in changes)) / len(changes)
    above = math.sqrt(sum(change.margins[1] ** 2 for change in changes)) / len(changes)
    return mean, max(-1.0, mean - below), min(1.0, mean + above)


def verdict(mean: float, low: float, target: float) -> str:
    return "met" if mean >= target and low > 0 else "MISSED"


# --------------------------------------------------------------------------- a run's events
def evaluations(events_file: Path) -> dict[int, dict]:
    """The eval/ metrics of each evaluation, by step."""
    return {event["step"]: event["values"] for event in events_of(events_file, "metrics")
            if EVAL_PASS_AT_1 in event["values"]}


def step_metrics(events_file: Path) -> list[dict]:
    """The metrics of each training step, every event of a step merged, in step order (set-up left out)."""
    return [merged["values"] for merged in training_steps(events_file).values()]


def run_change(evals: dict[int, dict]) -> Change | None:
    """The change from the first evaluation to the last; None with fewer than two."""
    if len(evals) < 2:
        return None
    first, last = evals[min(evals)], evals[max(evals)]
    return Change(first[EVAL_PASS_AT_1], int(first[EVAL_EXAMPLES]), last[EVAL_PASS_AT_1],
                  int(last[EVAL_EXAMPLES]))


def evaluation_table(evals: dict[int, dict]) -> str:
    rows = []
    for step in sorted(evals):
        share, n = evals[step][EVAL_PASS_AT_1], int(evals[step][EVAL_EXAMPLES])
        low, high = wilson(share, n)
        rows.append((step, f"{share:.2f}", f"{low:.2f} – {high:.2f}", n, f"{evals[step].get(EVAL_SECONDS, 0):.0f}"))
    return markdown_table(("step", "held-out accuracy", "95% interval (Wilson)", "problems", "eval s"), rows)


def change_row(change: Change | None, target: float) -> tuple[str, str, str]:
    if change is None:
        return ("held-out change, first → last", "—", "fewer than two evaluations")
    low, high = change_interval(change.first, change.n_first, change.last, change.n_last)
    return ("held-out change, first → last", f"{change.first:.2f} → {change.last:.2f}: {change.value:+.2f}",
            f"95% interval {low:+.2f} to {high:+.2f}; target ≥ +{target:.2f}: {verdict(change.value, low, target)}")


def step_entropies(steps: list[dict]) -> list[float]:
    return [v[TRAIN_ENTROPY] for v in steps if TRAIN_ENTROPY in v]


def window_means(values: list[float], window: int = ENTROPY_WINDOW) -> list[float]:
    """The mean of each `window` values in a row (of all of them, when there are fewer)."""
    if len(values) <= window:
        return [statistics.fmean(values)] if values else []
    return [statistics.fmean(values[i:i + window]) for i in range(len(values) - window + 1)]


def entropy_rows(steps: list[dict]) -> list[tuple[str, str, str]]:
    entropy = step_entropies(steps)
    if not entropy:
        return [("entropy min", "—", "no step reported it")]
    means = window_means(entropy)
    below = next((min(i + ENTROPY_WINDOW, len(entropy)) for i, e in enumerate(means) if e < ENTROPY_FLOOR), None)
    lowest_step = entropy.index(min(entropy)) + 1
    return [("entropy first → last 5 steps", f"{statistics.fmean(entropy[:5]):.3f} → {statistics.fmean(entropy[-5:]):.3f}",
             "nats a token"),
            (f"entropy min, {ENTROPY_WINDOW}-step mean", f"{min(means):.3f}",
             f"stayed > {ENTROPY_FLOOR}: " + ("yes" if below is None else f"NO (first below by step {below})")),
            ("entropy min, one step", f"{min(entropy):.3f}",
             f"step {lowest_step}; {sum(e < ENTROPY_FLOOR for e in entropy)} step(s) under {ENTROPY_FLOOR}")]


def reward_rows(steps: list[dict]) -> list[tuple[str, str, str]]:
    """Each reward's mean, first five steps → last five, and what the run's alarms watch: KL to the
    sampler, the groups with nothing to learn from."""
    def first_and_last(key: str) -> str:
        values = [v[key] for v in steps if key in v]
        return f"{statistics.fmean(values[:5]):.2f} → {statistics.fmean(values[-5:]):.2f}" if values else "—"
    names = sorted({members[0] for v in steps for k in v if (members := ROLLOUT_REWARD_FN_MEAN.members(k))})
    rows = [(f"reward {name}, first → last 5 steps", first_and_last(ROLLOUT_REWARD_FN_MEAN.name(reward=name)), "")
            for name in names]
    if any(EPISODE_TOOL_CALLS_MEAN in v for v in steps):
        rows.append(("tool calls an episode, first → last 5 steps", first_and_last(EPISODE_TOOL_CALLS_MEAN), ""))
    kl = [v[TRAIN_KL_TO_SAMPLER] for v in steps if TRAIN_KL_TO_SAMPLER in v]
    if kl:
        rows.append(("KL to the sampler max", f"{max(kl):.3f}", "an alarm watches it"))
    equal = [v[ROLLOUT_FRAC_REWARD_ZERO_STD] for v in steps if ROLLOUT_FRAC_REWARD_ZERO_STD in v]
    if equal:
        rows.append(("steps where every group had equal rewards", f"{sum(e == 1.0 for e in equal)} / {len(equal)}",
                     f"mean share of such groups {statistics.fmean(equal):.2f}"))
    return rows


# --------------------------------------------------------------------------- running
def demo_spec(demo: DemoDefinition, output_dir: Path, server_url: str, config: TrainingConfig) -> dict:
    """The launch spec of the demo's run as the control plane would build it (runs/training_runs/launch.py)."""
    def reward(fields: dict, weight: float) -> dict:
        return {"name": fields["name"], "kind": fields["kind"], "builtin": fields.get("builtin"),
                "params": fields["params"], "weight": weight}
    environment = demo.environment
    return {
        "run_id": 0, "model": config.model, "output_dir": str(output_dir), "inference_url": server_url,
        "dataset": {"kind": "generator", "generator": demo.dataset["generator"],
                    "prompt_column": demo.dataset["prompt_column"], "params": demo.dataset["generator_params"]},
        "rewards": [reward(fields, weight) for fields, weight in demo.rewards],
        "eval_rewards": [reward(fields, 1.0) for fields, _ in demo.rewards if fields["name"] in demo.eval_rewards],
        "environment": None if environment is None else {
            key: environment[key] for key in ("name", "kind", "builtin", "params")},
        "config": config.model_dump(),
    }


def with_weights(demo: DemoDefinition, weights: dict[str, float]) -> DemoDefinition:
    """The demo with some rewards' weights changed, each named by its built-in or its name; an
    unknown one is refused naming those the demo has."""
    known = {key for fields, _ in demo.rewards for key in (fields.get("builtin"), fields["name"]) if key}
    if unknown := sorted(set(weights) - known):
        raise ValueError(f"the {demo.key} demo has no reward {', '.join(unknown)}; it has {', '.join(sorted(known))}")
    def weight(fields: dict, current: float) -> float:
        return weights.get(fields["name"], weights.get(fields.get("builtin") or "", current))
    return replace(demo, rewards=[(fields, weight(fields, current)) for fields, current in demo.rewards])


def parse_weights(pairs: list[str]) -> dict[str, float]:
    """`--weight format=0.25 ...` as {name: weight}."""
    weights = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        try:
            weights[name] = float(value)
        except ValueError:
            raise ValueError(f"--weight {pair!r}: expected NAME=NUMBER, e.g. format=0.25") from None
    return weights


def with_dataset(demo: DemoDefinition, params: dict) -> DemoDefinition:
    """The demo with some of its generator's parameters changed (a new dataset for an experiment)."""
    return replace(demo, dataset={**demo.dataset, "generator_params": {**demo.dataset["generator_params"], **params}})


def demo_settings(demo: DemoDefinition, changes: dict, smoke: bool, preset: str | None = None) -> dict:
    """The demo's knobs (another preset under its overrides, where one is named), then `changes`."""
    settings = {**PRESETS[preset], **demo.config["overrides"]} if preset else demo.config_values(PRESETS)
    if smoke:  # evaluated before the first step and after the last, as the demo's run is
        settings = smoke_settings(settings, eval_steps=SMOKE_EVAL_STEPS, **SMOKE_CHANGES[demo.key])
    return {**settings, **changes}


@dataclass
class RunResult:
    demo: str
    seed: int
    outcome: str
    minutes: float
    evals: dict[int, dict]
    steps: list[dict]

    @property
    def change(self) -> Change | None:
        return run_change(self.evals)

    @property
    def entropy_min(self) -> float | None:
        """The lowest mean entropy of ENTROPY_WINDOW steps in a row: what the floor is judged on."""
        means = window_means(step_entropies(self.steps))
        return min(means) if means else None


def train(demo: DemoDefinition, settings: dict, server_url: str | None) -> RunResult:
    from worker.trainer.app import Trainer
    from worker.trainer.models.paths import resolve_model_path
    from worker.trainer.spec import LaunchSpec

    config = TrainingConfig(**settings)
    output = Path(tempfile.mkdtemp(prefix=f"bench-learning-{demo.key}-"))
    # A server a run: the one before it holds that run's trained weights.
    with vllm_server(resolve_model_path(config.model), config, output / "vllm.log", server_url) as server:
        trainer = Trainer(LaunchSpec.model_validate(demo_spec(demo, output, server.url, config)))
        started = time.monotonic()
        outcome = trainer.run()
        minutes = (time.monotonic() - started) / 60
    events_file = output / "events" / "events-trainer-1.jsonl"
    print(f"\n{demo.key}, seed {config.seed}: output in {output}", flush=True)
    return RunResult(demo.key, config.seed, str(outcome), minutes, evaluations(events_file), step_metrics(events_file))


def run_report(result: RunResult) -> str:
    target = TARGETS[result.demo]
    rows = [("outcome", result.outcome, ""), ("steps trained", str(len(result.steps)), ""),
            ("wall time (min)", f"{result.minutes:.1f}", "evaluations included"),
            change_row(result.change, target), *entropy_rows(result.steps), *reward_rows(result.steps)]
    return "\n".join([f"\nbench.learning — {result.demo}, seed {result.seed}",
                      evaluation_table(result.evals), "", markdown_table(("measure", "value", "note"), rows)])


def summary_rows(results: list[RunResult]) -> list[tuple]:
    """A row a demo: its runs' changes, their mean with its interval, the target, the entropy."""
    rows = []
    for key in dict.fromkeys(result.demo for result in results):
        runs = [result for result in results if result.demo == key]
        changes = [change for result in runs if (change := result.change) is not None]
        entropies = [e for result in runs if (e := result.entropy_min) is not None]
        lowest = min(entropies) if entropies else None
        entropy = "—" if lowest is None else f"{lowest:.3f} ({'yes' if lowest > ENTROPY_FLOOR else 'NO'})"
        if not changes:
            rows.append((key, len(runs), "—", "—", "—", f"+{TARGETS[key]:.2f}", "MISSED", entropy))
            continue
        mean, low, high = mean_change(changes)
        rows.append((key, len(runs), " ".join(f"{c.value:+.2f}" for c in changes), f"{mean:+.2f}",
                     f"{low:+.2f} to {high:+.2f}", f"+{TARGETS[key]:.2f}", verdict(mean, low, TARGETS[key]), entropy))
    return rows


SUMMARY_HEADER = ("demo", "seeds", "change a seed", "mean change", "95% interval", "target", "met?",
                  f"entropy min, {ENTROPY_WINDOW}-step mean (> {ENTROPY_FLOOR}?)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--demo", choices=(*DEMOS, "both"), default="both")
    parser.add_argument("--seeds", type=int, default=None, help="runs a demo, seeds the config's and the next "
                        "ones (default 3; 1 with --smoke)")
    parser.add_argument("--steps", type=int, default=None, help="steps to train; default the demo's")
    parser.add_argument("--preset", choices=("cpu-demo", "cpu-demo-lora"), default=None,
                        help="another preset under the demo's overrides (default the demo's own)")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="config changes (an experiment)")
    parser.add_argument("--weight", nargs="*", default=[], metavar="REWARD=WEIGHT",
                        help="a reward's weight, the reward named by its built-in (format) or its name")
    parser.add_argument("--dataset", nargs="*", default=[], metavar="PARAM=VALUE",
                        help="the demo generator's parameters changed (operators=+, largest=40)")
    add_smoke_options(parser, serves=True)
    args = parser.parse_args(argv)
    refuse_server_url_without_smoke(parser, args)
    if not args.smoke:
        from worker.trainer.models.prepare import prepare_default_model
        prepare_default_model()
    try:
        weights = parse_weights(args.weight)
        demos = [with_weights(demo, weights) if weights else demo
                 for demo in (DEMOS.values() if args.demo == "both" else [DEMOS[args.demo]])]
        if args.dataset:
            params = parse_settings(args.dataset)
            ArithmeticParams.model_validate({**DEMOS["arithmetic"].dataset["generator_params"], **params})
            demos = [with_dataset(demo, params) for demo in demos]
    except (ValueError, ValidationError) as exc:
        parser.error(str(exc))
    changes = parse_settings(args.set) | ({"max_steps": args.steps} if args.steps else {})
    results = []
    for demo in demos:
        settings = demo_settings(demo, changes, args.smoke, args.preset)
        first_seed = TrainingConfig(**settings).seed
        for seed in range(first_seed, first_seed + (args.seeds or (1 if args.smoke else 3))):
            results.append(train(demo, {**settings, "seed": seed}, args.server_url))
            print(run_report(results[-1]), flush=True)
    print(f"\nbench.learning — changes: {' '.join(args.set + args.weight + args.dataset) or 'none'}; the mean change's "
          "interval is the evaluations' sampling noise, the runs independent")
    print(markdown_table(SUMMARY_HEADER, summary_rows(results)))


if __name__ == "__main__":
    main()
