"""Does the diagnosis name a bottleneck made on purpose, and does its suggestion recover the time?

Not a test: it trains the real trainer against a real vLLM, prints tables and asserts nothing.

    .venv/bin/python -m bench.diagnosis                                 # every scenario, 10 steps a run
    .venv/bin/python -m bench.diagnosis --scenarios tiny_inflight,auto_inflight --steps 12
    .venv/bin/python -m bench.diagnosis --smoke                         # a tiny model, 2 steps a run

The cpu-demo preset (SmolLM2-135M learning arithmetic, 16 completions a step; its evaluation off,
so that no evaluation shares a step's time) is trained for --steps steps in each scenario:

- baseline: the preset as is (always run: the others are measured against it);
- slow_reward: code rewards that sleep (returning 0.0, so the rewards' totals do not move),
  sized from the baseline's step so that scoring a step's groups takes SLOW_FACTOR times it;
- tiny_inflight: max_inflight_tasks 1, so that one group at a time is generated;
- long_step: per_device_train_batch_size 1, gradient_accumulation_steps raised to keep the batch;
- auto_inflight: tiny_inflight's run with max_inflight_tasks "auto" (where the config takes it),
  to show the cap it settled on.

Each run's step events become the `series` the diagnosis engine takes (runs/diagnosis/engine.py,
as the API's GET /api/runs/<id>/diagnosis/ reads a run's metrics); the script prints whether it
named the intended bottleneck, its sentence and its first suggestion, then reruns the scenario
with that suggestion applied: seconds a step before and after, and how much of the gap to the
baseline it recovered, (made - after) / (made - baseline). On the baseline, where nothing was
made, it checks that the named bottleneck is the part of the step with the largest share (or
that the diagnosis says balanced): that it invents none.

Runs whose vLLM launch is the same (build_launch's command and environment for their config)
share one server, one at a time: a new server starts only when a suggestion changes what the
server is launched with. The server then still holds the previous run's weights until the run's
first weight sync, which moves the timings nothing measurable (10 steps at lr 1e-5).
"""
import argparse
import math
import os
import re
import shutil
import statistics
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.report import fmt, markdown_table
from bench.run_events import metrics_by_step, training_steps
from bench.smoke import add_smoke_options, refuse_server_url_without_smoke, smoke_settings
from worker.trainer.metric_names import ASYNC_MAX_INFLIGHT, SYSTEM_STEP_TIME_S

DEFAULT_STEPS = 10
SMOKE_STEPS = 2
SLOW_FACTOR = 2.0  # the slow reward's scoring of a step takes this many baseline steps
SMOKE_SLEEP_S = 0.01  # a completion, in the smoke run (its figures mean nothing)
DEFAULT_SLEEP_S = 0.3  # a completion, where no baseline was measured to size it from
# One sandboxed call (a reward on a group) may take 10 s (rewards/sandbox/limits.py): a slow
# reward's call stays under 8, and more time a group is more such rewards, called one after another.
MAX_CALL_S = 8.0
# Where a bottleneck shows in the time split (the contract's parts).
PART_OF = {"generation": "waiting_for_rollouts", "scoring": "waiting_for_rollouts", "training": "training",
           "weight_sync": "weight_sync", "evaluation": "evaluation"}
PARTS = ("waiting_for_rollouts", "training", "weight_sync", "evaluation", "other")

SLOW_REWARD = '''import time


def reward(prompts, completions, **columns):
    """Nothing (0.0 a completion) after {seconds} s a completion: what a slow verifier costs."""
    time.sleep({seconds} * len(completions))
    return [0.0] * len(completions)
'''


@dataclass(frozen=True)
class Scenario:
    name: str
    intended: str | None  # the bottleneck made; None: nothing made
    what: str
    slow_reward: bool = False


SCENARIOS = {scenario.name: scenario for scenario in (
    Scenario("baseline", None, "the preset as is"),
    Scenario("slow_reward", "scoring", f"code rewards sleeping {SLOW_FACTOR:g}x the baseline's step a step",
             slow_reward=True),
    Scenario("tiny_inflight", "generation", "max_inflight_tasks 1"),
    Scenario("long_step", "training", "micro-batch 1, accumulation raised to keep the batch"),
    Scenario("auto_inflight", None, 'max_inflight_tasks "auto" (beside tiny_inflight)'),
)}
MADE = ("slow_reward", "tiny_inflight", "long_step")


def scenario_changes(name: str, settings: Mapping) -> dict:
    """The config changes that make `name`'s bottleneck from the preset's `settings`."""
    if name == "tiny_inflight":
        return {"max_inflight_tasks": 1}
    if name == "auto_inflight":
        return {"max_inflight_tasks": "auto"}
    if name == "long_step":
        batch = settings["per_device_train_batch_size"] * settings["gradient_accumulation_steps"]
        return {"per_device_train_batch_size": 1, "gradient_accumulation_steps": batch}
    return {}


# --------------------------------------------------------------------------- the slow reward
def slow_reward_source(seconds_a_completion: float) -> str:
    return SLOW_REWARD.format(seconds=round(seconds_a_completion, 4))


def slow_reward_specs(seconds_a_group: float, group_size: int) -> list[dict]:
    """Code rewards that together sleep `seconds_a_group` on a group of `group_size`, each call
    under MAX_CALL_S (the sandbox's call timeout); each gives 0.0, so the totals do not move."""
    calls = max(1, math.ceil(seconds_a_group / MAX_CALL_S))
    source = slow_reward_source(seconds_a_group / calls / group_size)
    return [{"name": f"slow_{number + 1}", "kind": "code", "source": source} for number in range(calls)]


def scoring_seconds_a_group(baseline_step_s: float | None, groups_per_step: int, scoring_threads: int,
                            group_size: int, smoke: bool) -> float:
    """How long scoring a group must take for scoring a step's groups (on `scoring_threads`
    threads at once) to last SLOW_FACTOR baseline steps."""
    if smoke:
        return SMOKE_SLEEP_S * group_size
    if baseline_step_s is None:
        return DEFAULT_SLEEP_S * group_size
    rounds = math.ceil(groups_per_step / scoring_threads)
    return SLOW_FACTOR * baseline_step_s / rounds


# --------------------------------------------------------------------------- a run's figures
def series_of(steps: Mapping[int, dict]) -> dict[str, list[tuple[int, float]]]:
    """{name: [(step, value)]}, in step order, from metrics_by_step's merged steps: the numbers
    the control plane stores (and runs.telemetry.metrics_query reads back) of a run's metrics events."""
    series: dict[str, list[tuple[int, float]]] = {}
    for step in sorted(steps):
        for name, value in steps[step]["values"].items():
            if isinstance(value, (int, float)) and not (isinstance(value, float) and math.isnan(value)):
                series.setdefault(name, []).append((step, float(value)))
    return series


def step_seconds(steps: Sequence[dict], skip: int = 1) -> float | None:
    """The median system/step_time_s after the first `skip` steps (start-up, as the diagnosis'
    window leaves out): on shared cores one step can take five times the others, which a mean keeps."""
    times = [values[SYSTEM_STEP_TIME_S] for values in steps[skip:]] or [v[SYSTEM_STEP_TIME_S] for v in steps]
    return statistics.median(times) if times else None


# A made run less than this share slower than the baseline has no gap to recover: two runs of one
# setting differ by about that much, and a share of a gap that small reads as 417%.
LEAST_GAP = 0.1


def recovered(made_s: float | None, after_s: float | None, baseline_s: float | None) -> float | None:
    """The share of the gap to the baseline the change won back; None without a gap to recover."""
    if None in (made_s, after_s, baseline_s) or made_s - baseline_s < LEAST_GAP * baseline_s:
        return None
    return (made_s - after_s) / (made_s - baseline_s)


def cap_values(series: Mapping[str, Sequence[tuple[int, float]]]) -> list[float]:
    """The in-flight cap in force at each step (async/max_inflight; absent before the trainer reported it)."""
    return [value for _, value in series.get(ASYNC_MAX_INFLIGHT, [])]


# --------------------------------------------------------------------------- verdicts
NOT_MADE = "not made"  # the scenario's change did not make its part the step's largest


def verdict(intended: str | None, diagnosis: Mapping) -> str:
    """met / missed for a made bottleneck; on the baseline whether the one named is really there."""
    if diagnosis["status"] != "ok":
        return "too short"
    named = diagnosis["bottleneck"]
    shares = {part["part"]: part["share"] for part in diagnosis["time_split"]}
    largest = max(shares, key=shares.get) if shares else None
    if intended is not None:
        if named == intended:
            return "met"
        made = PART_OF[intended]
        if made != largest:  # the change did not make that part the step's largest: nothing to name
            return f"{NOT_MADE} ({made} {shares.get(made, 0.0):.0%} of a step)"
        return "**missed**"
    if named == "balanced":
        return "met: balanced"
    return "met: its largest part" if PART_OF.get(named) == largest else f"**invented** (largest: {largest})"


def first_suggestion(diagnosis: Mapping) -> dict | None:
    return diagnosis["suggestions"][0] if diagnosis.get("suggestions") else None


def suggestion_text(suggestion: Mapping | None) -> str:
    if suggestion is None:
        return "none"
    also = "".join(f", {knob} {value}" for knob, value in (suggestion.get("also_set") or {}).items())
    return f"{suggestion['knob']}: {suggestion['current']} → {suggestion['proposed']}{also}"


def suggested_changes(suggestion: Mapping) -> dict:
    """The config changes a suggestion makes: its knob, and those it sets with it (a batch kept whole)."""
    return {**(suggestion.get("also_set") or {}), suggestion["knob"]: suggestion["proposed"]}


def refusal(settings: Mapping) -> str | None:
    """Why TrainingConfig refuses these settings (its first error), or None when it takes them."""
    from pydantic import ValidationError

    from worker.trainer.config import TrainingConfig

    try:
        TrainingConfig(**settings)
    except ValidationError as exc:
        error = exc.errors()[0]
        return f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"
    return None


# --------------------------------------------------------------------------- runs
@dataclass
class Measured:
    """One trainer run: what it ran with and what the diagnosis made of its metrics."""
    label: str
    settings: dict
    outcome: str
    steps: list[dict]
    series: dict
    diagnosis: dict
    wall_s: float

    @property
    def step_s(self) -> float | None:
        return step_seconds(self.steps)


@dataclass
class Row:
    scenario: Scenario
    made: Measured
    after: Measured | None = None
    note: str = ""


def launch_key(model_dir: str, config) -> tuple:
    """What a vLLM server for `config` is launched with, but its port: runs with the same key share one."""
    from worker.trainer.inference.launch import build_launch, installed_device

    launch = build_launch(model_dir, config, port=0, device=installed_device())
    return tuple(launch.argv), tuple(sorted(launch.env.items()))


@dataclass
class Servers:
    """One vLLM server at a time, for the launch the next run needs; `server_url` (--smoke) serves all."""
    model_dir: str
    root: Path
    server_url: str | None = None
    _server: object = None
    _key: tuple | None = None
    started: list[str] = field(default_factory=list)

    def url_for(self, config) -> str:
        if self.server_url:
            return self.server_url.rstrip("/")
        from worker.trainer.inference.server import VLLMServer

        key = launch_key(self.model_dir, config)
        if key != self._key:
            self.close()
            log = self.root / f"vllm-{len(self.started) + 1}.log"
            self._server = VLLMServer.for_config(self.model_dir, config, log_path=log)
            self._server.start()
            self._server.wait_until_healthy()
            self._key = key
            self.started.append(str(log))
        return self._server.url

    def close(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server, self._key = None, None


def run_spec(output: Path, server_url: str, config, slow_rewards: list[dict]) -> dict:
    from bench.learning import demo_spec
    from runs.demos.definitions import DEMOS

    spec = demo_spec(DEMOS["arithmetic"], output, server_url, config)
    spec["rewards"] += slow_rewards
    spec["eval_rewards"] = []
    return spec


def train(label: str, settings: dict, slow_rewards: list[dict], root: Path, servers: Servers) -> Measured:
    """One real trainer run, diagnosed from its own events."""
    from runs.diagnosis.engine import diagnose
    from worker.trainer.app import Trainer
    from worker.trainer.config import TrainingConfig
    from worker.trainer.spec import LaunchSpec

    config = TrainingConfig(**settings)
    output = root / re.sub(r"[^A-Za-z0-9_.-]+", "_", label)
    url = servers.url_for(config)
    print(f"  {time.strftime('%H:%M:%S')} {label}: training {config.max_steps} steps", flush=True)
    started = time.monotonic()
    outcome = Trainer(LaunchSpec.model_validate(run_spec(output, url, config, slow_rewards))).run()
    wall_s = time.monotonic() - started
    events = output / "events" / "events-trainer-1.jsonl"
    series = series_of(metrics_by_step(events))
    steps = [merged["values"] for merged in training_steps(events).values()]
    diagnosis = diagnose(series, config.model_dump()).as_dict()
    shutil.rmtree(output / "checkpoints", ignore_errors=True)  # the final save: 1.6 GB a run of SmolLM2
    return Measured(label, settings, outcome, steps, series, diagnosis, wall_s)


@dataclass
class Bench:
    preset: dict
    root: Path
    servers: Servers
    smoke: bool
    sleep_a_group: float | None = None

    def scenario_run(self, scenario: Scenario, changes: Mapping | None = None, label: str | None = None) -> Measured:
        settings = {**self.preset, **scenario_changes(scenario.name, self.preset), **(changes or {})}
        return train(label or scenario.name, settings, self.slow_rewards(scenario), self.root, self.servers)

    def slow_rewards(self, scenario: Scenario) -> list[dict]:
        if not scenario.slow_reward:
            return []
        return slow_reward_specs(self.sleep_a_group, self.preset["num_generations"])

    def size_slow_reward(self, baseline: Measured | None) -> None:
        from worker.trainer.config import TrainingConfig
        from worker.trainer.rollout.worker import SCORING_THREADS

        config = TrainingConfig(**self.preset)
        self.sleep_a_group = scoring_seconds_a_group(
            baseline.step_s if baseline else None, config.completions_per_step // config.num_generations,
            SCORING_THREADS, config.num_generations, self.smoke)

    def made_row(self, scenario: Scenario) -> Row:
        made = self.scenario_run(scenario)
        suggestion = first_suggestion(made.diagnosis)
        if suggestion is None:
            return Row(scenario, made, note="no suggestion to apply")
        changes = suggested_changes(suggestion)
        if (refused := refusal({**made.settings, **changes})) is not None:
            return Row(scenario, made, note=f"suggestion refused by TrainingConfig: {refused}")
        label = f"{scenario.name} + " + " ".join(f"{knob}={value}" for knob, value in changes.items())
        return Row(scenario, made, self.scenario_run(scenario, changes, label))


# --------------------------------------------------------------------------- tables
def main_row(row: Row, baseline_s: float | None) -> tuple:
    made, after = row.made, row.after
    scenario = row.scenario
    after_s = after.step_s if after else None
    met = verdict(scenario.intended, made.diagnosis)
    # A bottleneck that was not made left nothing of its own to recover, whatever the rerun gained.
    share = recovered(made.step_s, after_s, baseline_s) if scenario.intended and not met.startswith(NOT_MADE) \
        else None
    gained = fmt(share * 100, 0) + "%" if share is not None else ("no gap" if after else row.note or "—")
    return (scenario.name, scenario.intended or "none made", made.diagnosis["bottleneck"] or "—",
            met, suggestion_text(first_suggestion(made.diagnosis)),
            fmt(made.step_s), fmt(after_s), fmt(baseline_s), gained if scenario.name != "baseline" else "—")


MAIN_HEADER = ("scenario", "intended", "named", "met?", "suggestion", "s/step made", "s/step after",
               "baseline s/step", "recovered")
SPLIT_HEADER = ("run", "outcome", "steps", "waiting_for_rollouts", "training", "weight_sync", "evaluation", "other",
                "gen tok/s", "train tok/s", "wall s")
CAP_HEADER = ("run", "max_inflight_tasks", "cap in force first → last", "cap mean", "s/step", "waiting share",
              "named")


def split_row(measured: Measured) -> tuple:
    diagnosis = measured.diagnosis
    shares = {part["part"]: part["share"] for part in diagnosis.get("time_split") or []}
    throughput = diagnosis.get("throughput") or {}
    return (measured.label, measured.outcome, len(measured.steps),
            *(f"{shares[part]:.0%}" if part in shares else "—" for part in PARTS),
            fmt(throughput.get("generation_tokens_per_s"), 0), fmt(throughput.get("training_tokens_per_s"), 0),
            f"{measured.wall_s:.0f}")


def cap_row(measured: Measured) -> tuple:
    caps = cap_values(measured.series)
    shares = {part["part"]: part["share"] for part in measured.diagnosis.get("time_split") or []}
    waiting = shares.get("waiting_for_rollouts")
    return (measured.label, measured.settings["max_inflight_tasks"],
            f"{caps[0]:g} → {caps[-1]:g}" if caps else "— (not reported)",
            fmt(statistics.fmean(caps), 1) if caps else "—", fmt(measured.step_s),
            f"{waiting:.0%}" if waiting is not None else "—", measured.diagnosis["bottleneck"] or "—")


def said(measured: Measured) -> str:
    """What the diagnosis said of a run, in two lines."""
    diagnosis = measured.diagnosis
    suggestion = first_suggestion(diagnosis)
    line = f"- {measured.label}: {diagnosis['status']}, named {diagnosis['bottleneck'] or '—'}: {diagnosis['sentence']}"
    if suggestion:
        line += f"\n  first suggestion: {suggestion_text(suggestion)} ({suggestion['why']})"
    return line


# --------------------------------------------------------------------------- main
def chosen(names: str | None) -> list[str]:
    """The scenarios asked for, the baseline first (every other is measured against it)."""
    if not names:
        return list(SCENARIOS)
    asked = [name.strip() for name in names.split(",") if name.strip()]
    if unknown := [name for name in asked if name not in SCENARIOS]:
        raise argparse.ArgumentTypeError(f"unknown scenarios {', '.join(unknown)}; choose from {', '.join(SCENARIOS)}")
    return ["baseline", *(name for name in SCENARIOS if name in asked and name != "baseline")]


def preset_settings(steps: int, smoke: bool, changes: Mapping | None = None) -> dict:
    """The cpu-demo preset (tiny under --smoke), evaluation off, then --set's `changes`."""
    from worker.trainer.config import PRESETS

    preset = smoke_settings(PRESETS["cpu-demo"]) if smoke else dict(PRESETS["cpu-demo"])
    return {**preset, "max_steps": steps, "eval_steps": 0, "save_steps": 1000, "seed": 0, **(changes or {})}


def measure(names: list[str], bench: Bench) -> tuple[list[Row], list[Measured], str | None]:
    """The main table's rows, the auto cap's runs, and why auto did not run (where it did not)."""
    baseline = bench.scenario_run(SCENARIOS["baseline"])
    bench.size_slow_reward(baseline)
    rows, capped, auto_note = [Row(SCENARIOS["baseline"], baseline)], [], None
    for name in names:
        if name in MADE:
            rows.append(bench.made_row(SCENARIOS[name]))
            if name == "tiny_inflight":
                capped.append(rows[-1].made)
    if "auto_inflight" in names:
        settings = {**bench.preset, **scenario_changes("auto_inflight", bench.preset)}
        if (auto_note := refusal(settings)) is None:
            capped.append(bench.scenario_run(SCENARIOS["auto_inflight"]))
    return rows, capped, auto_note


def batch_text(settings: Mapping) -> str:
    from worker.trainer.config import TrainingConfig

    config = TrainingConfig(**settings)
    return f"{config.completions_per_step // config.num_generations} groups of {config.num_generations} a step"


def report(rows: list[Row], capped: list[Measured], auto_note: str | None, bench: Bench) -> None:
    baseline_s = rows[0].made.step_s
    runs = [measured for row in rows for measured in (row.made, row.after) if measured is not None]
    runs += [measured for measured in capped if measured not in runs]
    print("\nWhat the diagnosis said (runs/diagnosis/engine.py on each run's step metrics)\n")
    print("\n".join(said(measured) for measured in runs))
    if bench.sleep_a_group is not None and any(row.scenario.slow_reward for row in rows):
        print(f"\nslow_reward: {bench.sleep_a_group:.2f} s of sleep a group of {bench.preset['num_generations']} "
              f"({len(bench.slow_rewards(SCENARIOS['slow_reward']))} code rewards of at most {MAX_CALL_S:g} s a call)")
    print(f"\nEach made bottleneck, the diagnosis and its first suggestion applied: cpu-demo, "
          f"{bench.preset['max_steps']} steps a run, {batch_text(bench.preset)}, evaluation off; "
          "s/step: median after the first step; "
          "recovered: (made - after) / (made - baseline)\n")
    print(markdown_table(MAIN_HEADER, (main_row(row, baseline_s) for row in rows)))
    print("\nWhere each run's step went (the diagnosis' time split, mean per step over its window)\n")
    print(markdown_table(SPLIT_HEADER, (split_row(measured) for measured in runs)))
    if capped or auto_note:
        print("\nThe in-flight cap: fixed at 1 against auto (async/max_inflight, the cap in force at each step)\n")
        print(markdown_table(CAP_HEADER, (cap_row(measured) for measured in capped)))
        if auto_note:
            print(f'\nauto_inflight not run: TrainingConfig refuses max_inflight_tasks "auto" ({auto_note})')


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", type=chosen, default=None,
                        help=f"a comma-separated subset of {', '.join(SCENARIOS)} (the baseline always runs)")
    parser.add_argument("--steps", type=int, default=None, help=f"steps a run (default {DEFAULT_STEPS})")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                        help="changes to the preset every scenario starts from (a shorter run on a busy machine)")
    add_smoke_options(parser, serves=True)
    args = parser.parse_args(argv)
    refuse_server_url_without_smoke(parser, args)
    names = args.scenarios or chosen(None)
    steps = args.steps or (SMOKE_STEPS if args.smoke else DEFAULT_STEPS)

    from worker.trainer.models.paths import resolve_model_path

    if not args.smoke:
        from worker.trainer.models.prepare import prepare_default_model

        prepare_default_model()
    from bench.trainer import parse_settings

    preset = preset_settings(steps, args.smoke, parse_settings(args.set))
    root = Path(tempfile.mkdtemp(prefix="bench-diagnosis-"))
    print(f"bench.diagnosis: {', '.join(names)}; preset changes: {' '.join(args.set) or 'none'}; output in {root}; "
          f"{os.cpu_count()} cores, "
          f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    from worker.trainer.config import TrainingConfig

    servers = Servers(str(resolve_model_path(TrainingConfig(**preset).model)), root, args.server_url)
    bench = Bench(preset, root, servers, args.smoke)
    try:
        rows, capped, auto_note = measure(names, bench)
    finally:
        servers.close()
    report(rows, capped, auto_note, bench)
    print(f"\nvLLM servers started: {len(servers.started) or 'none (the shared one)'}; load average at the end "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
