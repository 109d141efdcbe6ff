"""Multi-turn environments on this CPU: does SmolLM2-135M learn to use the calculator, and what
do episodes cost against one-shot rollouts?

    .venv/bin/python -m bench.environments learning              # the calculator, 15 minutes of training
    .venv/bin/python -m bench.environments learning --minutes 5  # a shorter look
    .venv/bin/python -m bench.environments cost                  # episodes against one-shot rollouts
    .venv/bin/python -m bench.environments --smoke               # both on a tiny model, 2 steps, 1 group (bench/smoke.py)

learning: the calculator environment (arithmetic at difficulty 3, where a calculator helps) with
the accuracy reward; prints final-answer accuracy and the correct-tool-use rate (episodes that
called the calculator and whose every call worked), first five steps against the last five
(target +0.2 each), and the same on held-out problems from the run's own evaluation.

cost: generated tokens per second of G episodes of T turns of L/T tokens each against G
one-shot completions of L tokens, on the same server (target: within 20%).
"""
import argparse
import asyncio
import statistics
import tempfile
import threading
import time
from pathlib import Path

from bench.learning import evaluations, step_metrics
from bench.report import markdown_table
from bench.smoke import add_smoke_options, refuse_server_url_without_smoke, smoke_settings, vllm_server
from worker.trainer.config import PRESETS, TrainingConfig
from worker.trainer.metric_names import (EPISODE_CLEAN_TOOL_USE, EPISODE_TOOL_CALLS_MEAN, EPISODE_TOOL_ERROR_RATE,
                                         EVAL_EPISODE, EVAL_EXAMPLES, EVAL_PASS_AT_1, ROLLOUT_REWARD_FN_MEAN)

ACCURACY = ROLLOUT_REWARD_FN_MEAN.name(reward="accuracy")
HELD_OUT_TOOL_USE = EVAL_EPISODE.name(metric=EPISODE_CLEAN_TOOL_USE)

TARGET_GAIN = 0.2
COST_TARGET = 0.8  # episodes' tokens/s at least 80% of one-shot's


def calculator_spec(output_dir: Path, server_url: str, config: TrainingConfig) -> dict:
    return {
        "run_id": 0, "model": config.model, "output_dir": str(output_dir), "inference_url": server_url,
        "dataset": {"kind": "generator", "generator": "arithmetic",
                    "params": {"count": 5000, "difficulty": 3, "seed": 0}},
        "rewards": [{"name": "accuracy", "kind": "builtin", "builtin": "accuracy"}],
        "environment": {"name": "calculator", "kind": "builtin", "builtin": "calculator", "params": {}},
        "eval_rewards": [{"name": "accuracy", "kind": "builtin", "builtin": "accuracy"}],
        "config": config.model_dump(),
    }


def first_and_last(steps: list[dict], name: str) -> tuple[float, float]:
    values = [v[name] for v in steps if name in v]
    return statistics.fmean(values[:5]), statistics.fmean(values[-5:])


def gain_row(label: str, first: float, last: float, note: str = "") -> tuple[str, str, str]:
    verdict = "met" if last - first >= TARGET_GAIN else "MISSED"
    return (label, f"{first:.2f} → {last:.2f}", f"gain {last - first:+.2f} (target ≥ +{TARGET_GAIN}: {verdict}) {note}")


def learning(args) -> None:
    from worker.trainer.app import Trainer
    from worker.trainer.models.paths import resolve_model_path
    from worker.trainer.models.prepare import prepare_default_model
    from worker.trainer.spec import LaunchSpec

    settings = {**PRESETS["cpu-demo"], "max_steps": 100_000, "max_turns": 3, "max_tool_calls": 2,
                "max_completion_length": 96, "max_episode_tokens": 192, "max_prompt_length": 512,
                "eval_steps": 15, "eval_examples": 48}
    if args.smoke:  # two steps of episodes of 2 turns, evaluated before the first and after the last
        settings = smoke_settings(settings, max_turns=2, max_episode_tokens=32, eval_steps=2)
    else:
        prepare_default_model()
    config = TrainingConfig(**settings)
    output = Path(tempfile.mkdtemp(prefix="bench-environments-"))
    with vllm_server(resolve_model_path(config.model), config, output / "vllm.log", args.server_url) as server:
        trainer = Trainer(LaunchSpec.model_validate(calculator_spec(output, server.url, config)))
        deadline = threading.Timer(args.minutes * 60, trainer.report.cancel_requested.set)
        deadline.start()
        started = time.monotonic()
        try:
            outcome = trainer.run()
        finally:
            deadline.cancel()  # a run that ended by itself (a smoke run's steps)
        trained_s = time.monotonic() - started
    events_file = output / "events" / "events-trainer-1.jsonl"
    steps = step_metrics(events_file)
    evals = evaluations(events_file)
    ordered = sorted(evals)
    rows = [("outcome", outcome, ""), ("steps trained", str(len(steps)), ""),
            ("wall time (min)", f"{trained_s / 60:.1f}", ""),
            gain_row("final-answer accuracy, first → last 5 steps", *first_and_last(steps, ACCURACY)),
            gain_row("correct tool use, first → last 5 steps", *first_and_last(steps, EPISODE_CLEAN_TOOL_USE)),
            ("tool calls an episode, first → last 5 steps",
             "{:.2f} → {:.2f}".format(*first_and_last(steps, EPISODE_TOOL_CALLS_MEAN)), ""),
            ("tool error rate, first → last 5 steps",
             "{:.2f} → {:.2f}".format(*first_and_last(steps, EPISODE_TOOL_ERROR_RATE)), "")]
    if len(ordered) >= 2:
        first, last = evals[ordered[0]], evals[ordered[-1]]
        held = f"held-out, step {ordered[0]} → {ordered[-1]}"
        rows += [gain_row(f"final-answer accuracy, {held}", first[EVAL_PASS_AT_1], last[EVAL_PASS_AT_1],
                          f"({int(first[EVAL_EXAMPLES])} problems, greedy)"),
                 gain_row(f"correct tool use, {held}", first.get(HELD_OUT_TOOL_USE, 0.0),
                          last.get(HELD_OUT_TOOL_USE, 0.0))]
    print(f"\nbench.environments learning — calculator on {Path(config.model).name}, {args.minutes:g} min, "
          f"output in {output}")
    print(markdown_table(("measure", "value", "note"), rows))


def continuing_environment():
    """An environment that always answers "go on": episodes of exactly T turns."""
    from worker.trainer.environments.base import Environment

    class Continue(Environment):
        def step(self, messages, row):
            return "go on"
    return Continue()


async def timed_tokens(play, count: int) -> tuple[int, float]:
    started = time.perf_counter()
    completions = await asyncio.gather(*(play() for _ in range(count)))
    tokens = sum(sum(c.loss_mask) if c.loss_mask else len(c.token_ids)
                 for group in completions for c in group)
    return tokens, time.perf_counter() - started


def cost(args) -> None:
    from transformers import AutoTokenizer

    from worker.trainer.environments.base import prompt_messages
    from worker.trainer.environments.episodes import EpisodeLimits, EpisodeRunner, EpisodeSampler
    from worker.trainer.environments.rendering import ChatRendering
    from worker.trainer.models.paths import resolve_model_path
    from worker.trainer.models.prepare import prepare_default_model
    from worker.trainer.inference.completions_client import CompletionsClient

    if args.smoke:
        config = TrainingConfig(**smoke_settings(PRESETS["cpu-demo"]))
    else:
        prepare_default_model()
        config = TrainingConfig(**PRESETS["cpu-demo"])
    model_dir = resolve_model_path(config.model)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    rendering = ChatRendering(tokenizer)
    messages = prompt_messages("Tell me a long story about a calculator.")
    prompt_ids = rendering.ids(rendering.text(messages, generation_prompt=True))
    per_turn = args.tokens // args.turns
    output = Path(tempfile.mkdtemp(prefix="bench-environments-cost-"))
    with vllm_server(model_dir, config, output / "vllm.log", args.server_url) as server:
        fixed = {"temperature": 1.0, "ignore_eos": True}

        async def measure():
            one_shot = CompletionsClient(server.url, server.served_model_name,
                                         {**fixed, "max_tokens": args.tokens, "min_tokens": args.tokens}, 600)
            turns = CompletionsClient(server.url, server.served_model_name,
                                      {**fixed, "min_tokens": per_turn}, 600)
            limits = EpisodeLimits(max_turns=args.turns, max_tool_calls=0, max_turn_tokens=per_turn,
                                   max_episode_tokens=args.tokens, max_context=4096, timeout_s=30)
            sampler = EpisodeSampler(turns, EpisodeRunner(continuing_environment(), rendering, limits, "text", lambda: 0))
            await timed_tokens(lambda: one_shot.sample(prompt_ids, 8), 1)  # warm-up
            results = {}
            for name, play in (("one-shot", lambda: one_shot.sample(prompt_ids, args.generations)),
                               (f"{args.turns}-turn episodes", lambda: sampler.sample(
                                   prompt_ids, args.generations, columns={"prompt": messages}))):
                results[name] = await timed_tokens(play, args.groups)
            await one_shot.close()
            await turns.close()
            return results

        results = asyncio.run(measure())
    (peer_tokens, peer_s), (tokens, seconds) = results.values()
    ratio = (tokens / seconds) / (peer_tokens / peer_s)
    rows = [(name, str(count), f"{secs:.1f}", f"{count / secs:.0f}") for name, (count, secs) in results.items()]
    rows.append(("episodes / one-shot", "", "", f"{ratio:.2f}x (target ≥ {COST_TARGET}: "
                                                 f"{'met' if ratio >= COST_TARGET else 'MISSED'})"))
    print(f"\nbench.environments cost — {Path(config.model).name}, {args.groups} groups of {args.generations}, "
          f"{args.tokens} generated tokens each ({args.turns} turns of {per_turn} for episodes)")
    print(markdown_table(("rollouts", "generated tokens", "seconds", "tokens / s"), rows))


# What `--smoke` without a mode runs of each: the smallest sizes.
SMOKE_LEARNING = {"minutes": 5.0}
SMOKE_COST = {"tokens": 8, "turns": 2, "groups": 1, "generations": 2}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_smoke_options(parser, serves=True)
    modes = parser.add_subparsers(dest="mode", help="with --smoke, none runs both at their smallest")
    learn = modes.add_parser("learning")
    learn.add_argument("--minutes", type=float, default=15.0)
    learn.set_defaults(run=learning)
    spend = modes.add_parser("cost")
    spend.add_argument("--tokens", type=int, default=128, help="generated tokens a rollout")
    spend.add_argument("--turns", type=int, default=4)
    spend.add_argument("--groups", type=int, default=4)
    spend.add_argument("--generations", type=int, default=8)
    spend.set_defaults(run=cost)
    args = parser.parse_args(argv)
    refuse_server_url_without_smoke(parser, args)
    if args.mode:
        args.run(args)
    elif args.smoke:
        learning(argparse.Namespace(**vars(args), **SMOKE_LEARNING))
        cost(argparse.Namespace(**vars(args), **SMOKE_COST))
    else:
        parser.error("name a mode: learning or cost (or --smoke for both at their smallest)")


if __name__ == "__main__":
    main()
