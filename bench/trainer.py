"""Trainer throughput, pipeline efficiency, weight sync and memory, against TRL's GRPOTrainer.

    .venv/bin/pip install -r requirements-bench.txt     # trl, py-spy (benchmarks only)
    .venv/bin/python -m bench.trainer                   # 2 warm-up + 6 measured steps each, ~12 min
    .venv/bin/python -m bench.trainer --quick           # 1 + 2 steps (~5 min)
    .venv/bin/python -m bench.trainer --smoke           # a tiny model, 1 + 1 steps: does it run (seconds)

SmolLM2-135M-Instruct on GSM8K prompts (train split, chat template), 8 generations of at
most 128 tokens, 16 completions (2 prompts x 8) per optimizer step, an accuracy reward
(worker.trainer.rewards.builtins "accuracy", GSM8K's `#### answer`), the same number of
steps for both trainers:

- ours: the cpu-demo preset (TrainingConfig + PRESETS["cpu-demo"], max_steps set to the
  steps measured) with its evaluation off (eval_steps=0: TRL evaluates nothing, and a comparison
  measures the same work on both sides; with it, three evaluations of 64 rows fall in an 11-step
  run), `python -m worker.trainer --spec` in a subprocess with an offline spec,
  against a vLLM server this script starts with VLLMServer.for_config (the launch the
  trainer would do itself). Numbers come from the trainer's own events JSONL.
- peer: TRL's GRPOTrainer, use_vllm=False (generation with transformers `generate`), in
  its own subprocess, the same model, prompts, batch, lengths, learning rate, loss (dapo,
  beta 0, epsilon 0.2/0.28), the same precision as ours (bf16 autocast where ours picks it:
  worker/trainer/training/precision.py), and gradient checkpointing off as in ours (TRL's
  default is on, which would make it slower). No vLLM server runs while TRL runs.

Both run alone on the machine (each waits for the other to finish); "completions/s" is
completions trained over the wall time of the measured steps (from the end of the last
warm-up step to the end of the last step), so model loading and server start are outside.

`--smoke` runs both on a tiny random Llama (bench/smoke.py) for 1 + 1 steps, TRL's side only
where TRL is installed, on the vLLM server at `--server-url` if given.

Nothing is asserted: the script prints one table and the configuration used.
"""
import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.report import markdown_table
from bench.run_events import metrics_by_step, training_steps
from bench.smoke import add_smoke_options, refuse_server_url_without_smoke, smoke_settings
from worker.trainer.processes.groups import kill_process_group
from worker.trainer.metric_names import (ASYNC_DROPPED_STALE, ASYNC_QUEUE_DEPTH, ASYNC_STALENESS_MAX,
                                         ASYNC_STALENESS_MEAN, ASYNC_WAIT_FOR_EXPIRING_S, ASYNC_WAIT_FOR_ROLLOUTS_S,
                                         ROLLOUT_COMPLETION_LENGTH_MEAN, SYSTEM_GENERATION_TOKENS_PER_S,
                                         SYSTEM_STEP_TIME_S, SYSTEM_TRAINING_TOKENS_PER_S, SYSTEM_TRAIN_SECONDS,
                                         SYSTEM_WEIGHT_SYNC_S)

ROOT = Path(__file__).resolve().parents[1]


GSM8K = Path(os.environ.get("GSM8K_DIR", ROOT.parent / "shared" / "datasets" / "gsm8k")) / "train.jsonl"
GIB = 1024 ** 3


# --------------------------------------------------------------------------- configs
# The same work as TRL's side: the preset evaluates held-out rows every 10 steps, TRL's run nothing.
LIKE_FOR_LIKE = {"eval_steps": 0}
OVERRIDES: dict = {}      # --set KEY=VALUE (an experiment: changes our config)
TRL_OVERRIDES: dict = {}  # --trl-set KEY=VALUE (an experiment: changes TRL's config)
SMOKE: dict = {}          # --smoke: the tiny model and sizes (bench/smoke.py)


def our_config(total_steps: int):
    from worker.trainer.config import PRESETS, TrainingConfig

    return TrainingConfig(**{**PRESETS["cpu-demo"], **LIKE_FOR_LIKE, **SMOKE, **OVERRIDES, "max_steps": total_steps})


def completions_per_step() -> int:
    return our_config(1).completions_per_step


def trl_settings(total_steps: int, output_dir: str) -> dict:
    from worker.trainer.training.setup import use_bf16

    ours = our_config(total_steps)
    settings = dict(
        output_dir=output_dir, use_vllm=False, use_cpu=True, bf16=use_bf16(ours.bf16), gradient_checkpointing=False,
        # The same micro-batches as ours (TRL's per_device_train_batch_size is one too).
        per_device_train_batch_size=ours.per_device_train_batch_size,
        gradient_accumulation_steps=ours.gradient_accumulation_steps,
        num_generations=ours.num_generations, max_completion_length=ours.max_completion_length, max_steps=total_steps,
        learning_rate=ours.learning_rate, lr_scheduler_type="constant", warmup_steps=0,
        temperature=ours.temperature, top_p=1.0, beta=0.0, loss_type="dapo",
        epsilon=ours.epsilon, epsilon_high=ours.epsilon_high, scale_rewards="group", max_grad_norm=1.0,
        logging_steps=1, save_strategy="no", report_to="none", seed=ours.seed,
        dataloader_num_workers=0, disable_tqdm=True, log_completions=False,
    )
    return {**settings, **TRL_OVERRIDES}


def our_spec(total_steps: int, output_dir: Path, server_url: str, data: Path) -> dict:
    config = our_config(total_steps)
    return {
        "run_id": 0, "model": config.model, "output_dir": str(output_dir), "inference_url": server_url,
        "dataset": {"kind": "file", "path": str(data), "format": "jsonl", "prompt_column": "question"},
        "rewards": [{"name": "accuracy", "kind": "builtin", "builtin": "accuracy"}],
        "config": config.model_dump(),
    }


# --------------------------------------------------------------------------- helpers
def wait_for_other_benchmarks(poll_s: float = 30.0, max_wait_s: float = 40 * 60) -> None:
    """Waits while bench.learning runs (it uses every core); says so. The pattern finds it
    started as a module (`-m bench.learning`) or as a file (`bench/learning.py`)."""
    started = time.monotonic()
    while time.monotonic() - started < max_wait_s:
        found = subprocess.run(["pgrep", "-f", "bench[./]learning"], capture_output=True, text=True).stdout.split()
        found = [pid for pid in found if int(pid) != os.getpid()]
        if not found:
            return
        print(f"  bench.learning is running (pids {' '.join(found)}): waiting {poll_s:.0f} s", flush=True)
        time.sleep(poll_s)
    print("  still running after the longest wait: measuring anyway (numbers are pessimistic)", flush=True)


def run_child(argv: list[str], env: dict, log_path: Path, timeout_s: float) -> int:
    """A child process in its own session, its output to `log_path`; killed (group) on timeout or error."""
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, cwd=ROOT, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            return proc.wait(timeout_s)
        except BaseException:
            kill_process_group(proc)
            raise


def tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no output)"


def busy_cpu_s() -> float:
    """CPU-seconds the whole machine has spent busy since boot (all processes, /proc/stat)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def group_cpu_s(pgid: int) -> float:
    """CPU-seconds used so far by the live processes of a process group (vLLM's server, engine, worker);
    0 for a server someone else started (no group of ours)."""
    from worker.trainer.inference.server import group_members

    if pgid is None:
        return 0.0
    total = 0
    for pid in group_members(pgid):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def parse_settings(pairs: list[str]) -> dict:
    """KEY=VALUE pairs, values read as JSON where they parse (8, 1e-5, true), else as strings."""
    settings = {}
    for key, value in parse_env(pairs).items():
        try:
            settings[key] = json.loads(value)
        except json.JSONDecodeError:
            settings[key] = value
    return settings


def parse_env(pairs: list[str]) -> dict:
    env = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        env[key] = value
    return env


# --------------------------------------------------------------------------- TRL (child process)
def trl_child(args) -> None:
    """Runs in its own process: TRL's GRPOTrainer for warm-up + measured steps; writes a JSON result."""
    import datasets
    from transformers import AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from worker.trainer.data.loading import render_prompt
    from worker.trainer.models.paths import resolve_model_path
    from worker.trainer.rewards.builtins import build_builtin

    model_dir = resolve_model_path(our_config(1).model)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    rows = [json.loads(line) for line in Path(args.data).read_text().splitlines()[:2000]]
    # Rendered with our chat-template code, so both trainers see the very same prompt text.
    dataset = datasets.Dataset.from_list([{"prompt": render_prompt(r["question"], tokenizer), "answer": r["answer"]}
                                          for r in rows])
    accuracy = build_builtin("accuracy", {})

    def gsm8k_accuracy(prompts, completions, **columns):
        return accuracy(prompts, completions, answer=columns["answer"])

    total = args.warmup + args.steps
    times = {"step_end": [], "generate_s": [], "completion_tokens": []}

    class Clock(TrainerCallback):
        def on_step_end(self, *_, **__):
            times["step_end"].append(time.perf_counter())

    class TimedGRPOTrainer(GRPOTrainer):
        def _generate_and_score_completions(self, inputs):
            started = time.perf_counter()
            out = super()._generate_and_score_completions(inputs)
            times["generate_s"].append(time.perf_counter() - started)
            times["completion_tokens"].append(int(out["completion_mask"].sum()))
            return out

    config = GRPOConfig(**trl_settings(total, args.trl_child_dir))
    trainer = TimedGRPOTrainer(model=model_dir, reward_funcs=gsm8k_accuracy, args=config,
                               train_dataset=dataset, processing_class=tokenizer, callbacks=[Clock()])
    loaded = time.perf_counter()
    trainer.train()
    ends = times["step_end"]
    result = {
        "steps": len(ends), "warmup": args.warmup, "first_step_s": ends[0] - loaded,
        "window_s": ends[-1] - ends[args.warmup - 1] if args.warmup else ends[-1] - loaded,
        "measured_steps": len(ends) - args.warmup,
        "generate_s": times["generate_s"][args.warmup:], "completion_tokens": times["completion_tokens"][args.warmup:],
        "maxrss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "cpu_s": sum(resource.getrusage(resource.RUSAGE_SELF)[:2]),
        "trl_version": __import__("trl").__version__,
        "completions_per_step": config.per_device_train_batch_size * config.gradient_accumulation_steps,
    }
    Path(args.trl_child_out).write_text(json.dumps(result))


def run_trl(args, work: Path) -> dict:
    out = work / "trl.json"
    argv = [sys.executable, "-m", "bench.trainer", "--_trl-child-out", str(out),
            "--_trl-child-dir", str(work / "trl-out"), "--warmup", str(args.warmup), "--steps", str(args.steps),
            "--data", str(args.data), *(["--smoke"] if args.smoke else []),
            "--set", *args.set, "--trl-set", *args.trl_set]
    log = work / "trl.log"
    print(f"TRL GRPOTrainer: {args.warmup} + {args.steps} steps (log: {log})", flush=True)
    started, busy = time.monotonic(), busy_cpu_s()
    code = run_child(argv, parse_env(args.trl_env), log, timeout_s=args.timeout_min * 60)
    if code != 0 or not out.exists():
        raise SystemExit(f"TRL run failed (exit {code}); last output:\n{tail(log)}")
    result = json.loads(out.read_text())
    result["total_s"] = time.monotonic() - started
    result["others_cpu_s"] = busy_cpu_s() - busy - result["cpu_s"]
    return result


# --------------------------------------------------------------------------- ours
# Runs `python -m worker.trainer --spec ...` and then records the process's own peak RSS and
# CPU time. It also times the parts of each weight sync (write, pause, reload, reset, resume)
# by wrapping those methods with a clock: timing only, the calls and their order are unchanged.
TRAINER_WRAPPER = """
import json, os, resource, runpy, sys, time
out = sys.argv.pop(1)
sys.argv[0] = "worker.trainer"
parts, in_sync = [], []
def timed(cls, name):
    original = getattr(cls, name)
    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            if in_sync:  # the same client also pauses generation while a step trains: not counted
                parts.append((name, time.perf_counter() - started))
    setattr(cls, name, wrapper)
from worker.trainer.weight_sync.filesystem import FilesystemWeightSync
from worker.trainer.inference.server_api import VllmAdminClient
original_push = FilesystemWeightSync.push
def push(*args, **kwargs):
    in_sync.append(True)
    try:
        return original_push(*args, **kwargs)
    finally:
        in_sync.clear()
FilesystemWeightSync.push = push
timed(FilesystemWeightSync, "write")
for name in ("pause", "reload_weights", "reset_prefix_cache", "resume"):
    timed(VllmAdminClient, name)

code = 0
try:
    runpy.run_module("worker.trainer", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code or 0
with open(out, "w") as f:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    json.dump({"code": code, "maxrss_bytes": usage.ru_maxrss * 1024, "cpu_s": usage.ru_utime + usage.ru_stime,
               "sync_parts": parts}, f)
sys.exit(code)
"""


def run_ours(args, work: Path) -> dict:
    from bench.smoke import RunningServer
    from worker.trainer.inference.server import VLLMServer
    from worker.trainer.models.paths import resolve_model_path

    total = args.warmup + args.steps
    config = our_config(total)
    model_dir = resolve_model_path(config.model)
    output = work / "ours"
    spec_path, rss_path = work / "spec.json", work / "ours-rss.json"
    server_env = parse_env(args.server_env)
    saved_env = {key: os.environ.get(key) for key in server_env}
    os.environ.update(server_env)  # inherited by `vllm serve` (the launch sets only its own keys)
    if args.server_url:
        server, health_s = RunningServer(args.server_url.rstrip("/")), 0.0
        print(f"ours: the vLLM server at {server.url}", flush=True)
    else:
        server = VLLMServer.for_config(model_dir, config, log_path=work / "vllm.log")
        print(f"ours: vLLM server (log: {server.log_path})", flush=True)
    try:
        if not args.server_url:
            server.start()
            health_s = server.wait_until_healthy()
        spec_path.write_text(json.dumps(our_spec(total, output, server.url, args.data)))
        log = work / "ours.log"
        print(f"ours: vLLM healthy in {health_s:.0f} s; trainer {args.warmup} + {args.steps} steps (log: {log})",
              flush=True)
        argv = [sys.executable, "-c", TRAINER_WRAPPER, str(rss_path), "--spec", str(spec_path)]
        started, busy, server_cpu = time.monotonic(), busy_cpu_s(), group_cpu_s(server.pid)
        env = {**parse_env(args.trainer_env)}
        code = run_child(argv, env, log, timeout_s=args.timeout_min * 60)
        total_s = time.monotonic() - started
        server_cpu = group_cpu_s(server.pid) - server_cpu
        busy = busy_cpu_s() - busy
    finally:
        if not args.server_url:
            server.stop()
        for key, value in saved_env.items():
            os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)
    if code != 0 or not rss_path.exists():
        raise SystemExit(f"our trainer failed (exit {code}); last output:\n{tail(work / 'ours.log')}")
    result = our_numbers(output / "events" / "events-trainer-1.jsonl", args.warmup)
    result.update(json.loads(rss_path.read_text()), total_s=total_s, vllm_health_s=health_s, server_cpu_s=server_cpu)
    result["others_cpu_s"] = busy - server_cpu - result["cpu_s"]
    return result


def our_numbers(events_file: Path, warmup: int) -> dict:
    """Our side's figures over the measured steps, every metrics event of a step merged (run_events)."""
    metrics = training_steps(events_file)
    steps = list(metrics)
    measured = [s for s in steps if s > warmup]
    first_time = metrics[warmup]["time"] if warmup else next(iter(metrics_by_step(events_file).values()))["time"]
    values = [metrics[s]["values"] for s in measured]
    config = our_config(1)
    groups_per_step = config.completions_per_step // config.num_generations
    dropped_before = metrics[warmup]["values"][ASYNC_DROPPED_STALE] if warmup else 0
    dropped = values[-1][ASYNC_DROPPED_STALE] - dropped_before

    def series(name):
        return [v.get(name, 0.0) for v in values]

    return {
        "steps": len(steps), "measured_steps": len(measured), "window_s": metrics[measured[-1]]["time"] - first_time,
        "wait_s": sum(series(ASYNC_WAIT_FOR_ROLLOUTS_S)), "step_time_s": sum(series(SYSTEM_STEP_TIME_S)),
        "train_s": series(SYSTEM_TRAIN_SECONDS), "weight_sync_s": series(SYSTEM_WEIGHT_SYNC_S),
        "dropped": dropped, "groups_trained": groups_per_step * len(measured),
        "dropped_total": metrics[steps[-1]]["values"][ASYNC_DROPPED_STALE],
        "staleness_mean": statistics.fmean(series(ASYNC_STALENESS_MEAN)),
        "staleness_max": max(series(ASYNC_STALENESS_MAX)),
        "queue_depth": series(ASYNC_QUEUE_DEPTH),
        "completion_length_mean": statistics.fmean(series(ROLLOUT_COMPLETION_LENGTH_MEAN)),
        "generation_tokens_per_s": series(SYSTEM_GENERATION_TOKENS_PER_S),
        "training_tokens_per_s": series(SYSTEM_TRAINING_TOKENS_PER_S),
        "per_step_wait": series(ASYNC_WAIT_FOR_ROLLOUTS_S), "per_step_time": series(SYSTEM_STEP_TIME_S),
        "expiring_wait_s": sum(series(ASYNC_WAIT_FOR_EXPIRING_S)),
    }


# --------------------------------------------------------------------------- report
def verdict(ok) -> str:
    return "—" if ok is None else ("yes" if ok else "NO")


def report(args, ours: dict | None, trl: dict | None) -> None:
    rows = []
    if ours:
        ours_rate = our_config(1).completions_per_step * ours["measured_steps"] / ours["window_s"]
    if trl:
        trl_rate = trl["completions_per_step"] * trl["measured_steps"] / trl["window_s"]
    if ours and trl:
        ratio = ours_rate / trl_rate
        rows.append(("completions trained / s", f"{ours_rate:.3f}", f"{trl_rate:.3f}", f"{ratio:.2f}x", "≥ 2x",
                     verdict(ratio >= 2)))
    elif ours or trl:
        rows.append(("completions trained / s", f"{ours_rate:.3f}" if ours else "—",
                     f"{trl_rate:.3f}" if trl else "—", "—", "≥ 2x", "—"))
    if ours:
        ours_step = ours["window_s"] / ours["measured_steps"]
        trl_step = trl["window_s"] / trl["measured_steps"] if trl else None
        rows.append(("wall s / step (measured steps)", f"{ours_step:.1f}", f"{trl_step:.1f}" if trl else "—",
                     f"{trl_step / ours_step:.2f}x faster" if trl else "—", "", ""))
        wait_share = ours["wait_s"] / ours["step_time_s"]
        rows.append(("share of step time waiting for rollouts", f"{wait_share:.1%}", "—", "—", "≤ 5%",
                     verdict(wait_share <= 0.05)))
        taken = ours["groups_trained"] + ours["dropped"]
        drop_share = ours["dropped"] / taken
        rows.append(("share of generated groups dropped stale", f"{drop_share:.1%} ({ours['dropped']}/{taken})",
                     "—", "—", "≤ 5%", verdict(drop_share <= 0.05)))
        syncs = [s for s in ours["weight_sync_s"] if s > 0]
        sync_cell = f"{statistics.fmean(syncs):.2f} / {max(syncs):.2f}" if syncs else "— (no sync measured)"
        rows.append(("weight sync s (mean / max)", sync_cell, "— (no server)", "—", "≤ 0.5 s",
                     verdict(max(syncs) <= 0.5 if syncs else None)))
        peak = ours["maxrss_bytes"] / GIB
        rows.append(("trainer peak RSS GiB", f"{peak:.2f}", f"{trl['maxrss_bytes'] / GIB:.2f}" if trl else "—",
                     f"{peak / (trl['maxrss_bytes'] / GIB):.2f}" if trl else "—", "≤ 4 GiB", verdict(peak <= 4)))
    elif trl:
        rows.append(("trainer peak RSS GiB", "—", f"{trl['maxrss_bytes'] / GIB:.2f}", "—", "≤ 4 GiB", "—"))
    print(f"\nThe same work on both sides: GRPO steps of {completions_per_step()} completions, no evaluation "
          f"(ours: the cpu-demo preset with eval_steps=0; TRL's run evaluates nothing)")
    print(markdown_table(("measure", "ours", "peer (TRL)", "ratio", "target", "met?"), rows))

    print("\ndetails (measured steps):")
    if ours:
        print(f"  ours: train s/step {fmt_list(ours['train_s'])}; wait s/step {fmt_list(ours['per_step_wait'])} "
              f"(of which for a group about to expire: {ours['expiring_wait_s']:.1f} s in all); "
              f"step_time s {fmt_list(ours['per_step_time'])}")
        print(f"        generation tok/s {fmt_list(ours['generation_tokens_per_s'], 0)}; training tok/s "
              f"{fmt_list(ours['training_tokens_per_s'], 0)}; queue depth {fmt_list(ours['queue_depth'], 0)}")
        print(f"        completion length mean {ours['completion_length_mean']:.0f} tokens; staleness mean "
              f"{ours['staleness_mean']:.2f}, max {ours['staleness_max']:.0f}; dropped stale in the whole run "
              f"{ours['dropped_total']:.0f}; vLLM /health {ours['vllm_health_s']:.0f} s; trainer process "
              f"{ours['total_s']:.0f} s in all")
        cores = os.cpu_count()
        print(f"        CPU over the trainer process's life ({ours['total_s']:.0f} s x {cores} cores): trainer "
              f"{ours['cpu_s'] / ours['total_s'] / cores:.0%}, vLLM {ours['server_cpu_s'] / ours['total_s'] / cores:.0%}, "
              f"other processes on the machine {max(ours['others_cpu_s'], 0) / ours['total_s'] / cores:.0%}")
        parts: dict[str, list[float]] = {}
        for name, seconds in ours.get("sync_parts", [])[-args.steps * 5:]:
            parts.setdefault(name, []).append(seconds)
        if parts:
            print("        weight sync parts, mean / max s over the last syncs: " + ", ".join(
                f"{name} {statistics.fmean(values):.3f} / {max(values):.3f}" for name, values in parts.items()))
    if trl:
        gen = trl["generate_s"]
        tokens = trl["completion_tokens"]
        print(f"  TRL:  generate+score s/step {fmt_list(gen)} (share of wall {sum(gen) / trl['window_s']:.0%}); "
              f"completion length mean {statistics.fmean(tokens) / completions_per_step():.0f} tokens; "
              f"first step {trl['first_step_s']:.0f} s; process {trl['total_s']:.0f} s in all")
        cores = os.cpu_count()
        print(f"        CPU over the TRL process's life ({trl['total_s']:.0f} s x {cores} cores): TRL "
              f"{trl['cpu_s'] / trl['total_s'] / cores:.0%}, other processes on the machine "
              f"{max(trl['others_cpu_s'], 0) / trl['total_s'] / cores:.0%}")


def fmt_list(values, digits: int = 2) -> str:
    return "[" + ", ".join(f"{v:.{digits}f}" for v in values) + "]"


def print_config(args) -> None:
    ours = our_config(args.warmup + args.steps)
    fields = ["num_generations", "max_completion_length", "max_prompt_length", "per_device_train_batch_size",
              "gradient_accumulation_steps", "learning_rate", "max_steps", "max_staleness", "max_inflight_tasks",
              "queue_maxsize", "weight_sync_steps", "weight_sync_backend", "bf16", "gradient_checkpointing",
              "loss_type", "beta", "epsilon", "epsilon_high", "temperature", "vllm_kv_cache_gib",
              "vllm_enforce_eager", "save_steps", "seed"]
    print(f"config (ours): TrainingConfig + PRESETS['cpu-demo'] + {LIKE_FOR_LIKE} (the same work as TRL's), "
          f"max_steps = warm-up + measured{' + the smoke sizes' if SMOKE else ''}")
    print("  " + ", ".join(f"{name}={getattr(ours, name)}" for name in fields))
    trl = trl_settings(args.warmup + args.steps, "<tmp>")
    print("config (TRL GRPOTrainer):")
    print("  " + ", ".join(f"{k}={v}" for k, v in trl.items() if k != "output_dir"))
    print(f"data: {args.data} (prompt = question through the chat template; reward = builtin accuracy on `answer`)")
    print(f"steps: {args.warmup} warm-up + {args.steps} measured, {completions_per_step()} completions per step")
    if OVERRIDES or TRL_OVERRIDES:
        print(f"EXPERIMENT: not the default config: ours {OVERRIDES or '-'}; TRL {TRL_OVERRIDES or '-'}")
    for name, pairs in (("trainer env", args.trainer_env), ("vLLM env", args.server_env), ("TRL env", args.trl_env)):
        if pairs:
            print(f"{name} (experiment): {' '.join(pairs)}")
    from worker.trainer.processes.allocator import chosen_library

    print(f"allocator (ours, worker/trainer/processes/allocator.py): {chosen_library() or 'glibc malloc'}; "
          f"TRL: glibc malloc unless --trl-env sets LD_PRELOAD")
    print(f"machine: {os.cpu_count()} cores, {platform.machine()}, load average {os.getloadavg()[0]:.2f}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1 warm-up + 2 measured steps (a few minutes)")
    add_smoke_options(parser, serves=True)
    parser.add_argument("--warmup", type=int, default=None, help="warm-up steps, not measured (default 2)")
    parser.add_argument("--steps", type=int, default=None, help="measured steps (default 6)")
    parser.add_argument("--only", choices=("ours", "trl"), help="run one side only")
    parser.add_argument("--no-wait", action="store_true", help="do not wait for bench.learning to finish")
    parser.add_argument("--timeout-min", type=float, default=30.0, help="limit per trainer run")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs, events)")
    parser.add_argument("--trainer-env", nargs="*", default=[], metavar="KEY=VALUE",
                        help="experiment: extra environment of our trainer process (e.g. OMP_NUM_THREADS=1)")
    parser.add_argument("--server-env", nargs="*", default=[], metavar="KEY=VALUE",
                        help="experiment: extra environment of the vLLM server (e.g. VLLM_CPU_OMP_THREADS_BIND=1)")
    parser.add_argument("--trl-env", nargs="*", default=[], metavar="KEY=VALUE",
                        help="experiment: extra environment of the TRL process")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                        help="experiment: override our TrainingConfig (e.g. per_device_train_batch_size=8 "
                             "gradient_accumulation_steps=2)")
    parser.add_argument("--trl-set", nargs="*", default=[], metavar="KEY=VALUE",
                        help="experiment: override TRL's GRPOConfig settings")
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)  # the TRL child's: the parent's prompts
    parser.add_argument("--_trl-child-out", dest="trl_child_out", help=argparse.SUPPRESS)
    parser.add_argument("--_trl-child-dir", dest="trl_child_dir", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    refuse_server_url_without_smoke(parser, args)
    small = args.quick or args.smoke
    args.warmup = args.warmup if args.warmup is not None else (1 if small else 2)
    args.steps = args.steps if args.steps is not None else (1 if args.smoke else 2 if args.quick else 6)
    return args


def smoke_data(work: Path) -> Path:
    """GSM8K's first rows where it is found, else arithmetic problems in its columns: a smoke run
    needs no data set downloaded."""
    from worker.trainer.data.generators import generate

    path = work / "prompts.jsonl"
    if GSM8K.is_file():
        path.write_text("".join(GSM8K.read_text().splitlines(keepends=True)[:64]))
    else:
        rows = generate("arithmetic", {"count": 64, "difficulty": 1, "seed": 0})
        path.write_text("".join(json.dumps({"question": row["prompt"], "answer": row["answer"]}) + "\n"
                                for row in rows))
    return path


def sides(args) -> tuple[str, ...]:
    """Which trainers run: both unless --only; a smoke run leaves TRL out where it is not installed."""
    import importlib.util

    wanted = (args.only,) if args.only else ("trl", "ours")
    if "trl" in wanted and importlib.util.find_spec("trl") is None:
        if not args.smoke:
            raise SystemExit("TRL (the peer) is not installed: .venv/bin/pip install -r requirements-bench.txt, "
                             "or measure our side alone with --only ours")
        print("TRL is not installed: the smoke run leaves its side out", flush=True)
        wanted = tuple(side for side in wanted if side != "trl")
    return wanted


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    for settings in (OVERRIDES, TRL_OVERRIDES, SMOKE):
        settings.clear()
    OVERRIDES.update(parse_settings(args.set))
    TRL_OVERRIDES.update(parse_settings(args.trl_set))
    if args.smoke:
        SMOKE.update(smoke_settings({}))
    if args.trl_child_out:
        return trl_child(args)

    if not args.smoke:
        from worker.trainer.models.prepare import prepare_default_model

        prepare_default_model()
        if not GSM8K.is_file():
            raise SystemExit(f"GSM8K not found at {GSM8K} (set GSM8K_DIR)")
    work = Path(tempfile.mkdtemp(prefix="bench-trainer-"))
    args.data = smoke_data(work) if args.smoke else GSM8K
    print_config(args)
    ours = trl = None
    try:
        running = sides(args)
        if "trl" in running:
            if not args.no_wait:
                wait_for_other_benchmarks()
            trl = run_trl(args, work)
        if "ours" in running:
            if not args.no_wait:
                wait_for_other_benchmarks()
            ours = run_ours(args, work)
        report(args, ours, trl)
        print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    finally:
        if args.keep:
            print(f"work directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
