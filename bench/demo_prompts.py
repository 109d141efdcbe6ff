"""What the untrained model's samples earn on the demo's rewards, by worked examples in the prompt.

    .venv/bin/python -m bench.demo_prompts                 # 40 problems, 0, 1 and 2 examples
    .venv/bin/python -m bench.demo_prompts --problems 100
    .venv/bin/python -m bench.demo_prompts --smoke         # a tiny model, 2 problems, 1 example (bench/smoke.py)

GRPO learns from groups whose rewards differ: a reward that no sample of a group earns gives it
no signal. This samples each problem as the cpu-demo preset does (num_generations at its
temperature) from the default model before any training, and prints, per number of worked
examples before the problem (the arithmetic generator's `examples`): each reward's mean and the
share of groups in which it varies.
"""
import argparse
import statistics
import tempfile
from pathlib import Path

from bench.report import markdown_table
from bench.smoke import add_smoke_options, refuse_server_url_without_smoke, smoke_settings, vllm_server
from worker.trainer.config import PRESETS, TrainingConfig
from worker.trainer.data.generators import generate
from worker.trainer.rewards.builtins import build_builtin


def completions(server, tokenizer, rows: list[dict], **sampling) -> list[str]:
    """The server's completions of each row's prompt through the chat template (`n` a row when
    sampling asks for more than one)."""
    import httpx

    from worker.trainer.data.loading import render_prompt

    prompts = [render_prompt(row["prompt"], tokenizer) for row in rows]
    response = httpx.post(f"{server.url}/v1/completions", timeout=900,
                          json={"model": server.served_model_name, "prompt": prompts, **sampling})
    response.raise_for_status()
    return [c["text"] for c in sorted(response.json()["choices"], key=lambda c: c["index"])]


def demo_rewards(rows: list[dict], texts: list[str]) -> tuple[list[float], list[float]]:
    """The demo's accuracy and format rewards of each completion (as many a row as `texts` holds)."""
    per_row = len(texts) // len(rows)
    prompts = [row["prompt"] for row in rows for _ in range(per_row)]
    answers = [row["answer"] for row in rows for _ in range(per_row)]
    return (build_builtin("accuracy", {})(prompts, texts, answer=answers),
            build_builtin("format", {})(prompts, texts))


def share_of_groups_that_vary(scores: list[float], group_size: int) -> float:
    groups = [scores[i:i + group_size] for i in range(0, len(scores), group_size)]
    return statistics.fmean(len(set(group)) > 1 for group in groups)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problems", type=int, default=None, help="default 40, smoke 2")
    parser.add_argument("--examples", type=int, nargs="+", default=None, help="default 0 1 2, smoke 1")
    add_smoke_options(parser, serves=True)
    args = parser.parse_args(argv)
    refuse_server_url_without_smoke(parser, args)
    args.problems = args.problems or (2 if args.smoke else 40)
    args.examples = args.examples or ([1] if args.smoke else [0, 1, 2])

    from transformers import AutoTokenizer

    from worker.trainer.models.paths import resolve_model_path
    from worker.trainer.models.prepare import prepare_default_model

    if args.smoke:
        config = TrainingConfig(**smoke_settings(PRESETS["cpu-demo"]))
    else:
        prepare_default_model()
        config = TrainingConfig(**PRESETS["cpu-demo"])
    model_dir = resolve_model_path(config.model)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    n = config.num_generations
    table = []
    log = Path(tempfile.mkdtemp(prefix="bench-demo-prompts-")) / "vllm.log"
    with vllm_server(model_dir, config, log, args.server_url) as server:
        for examples in args.examples:
            rows = generate("arithmetic", {"count": args.problems, "difficulty": 1, "seed": 4242,
                                           "examples": examples})
            # Sampled as the rollout samples a group: num_generations at the preset's temperature.
            texts = completions(server, tokenizer, rows, n=n, max_tokens=config.max_completion_length,
                                temperature=config.temperature)
            accuracy, formatted = demo_rewards(rows, texts)
            table.append((examples, statistics.fmean(accuracy), share_of_groups_that_vary(accuracy, n),
                          statistics.fmean(formatted), share_of_groups_that_vary(formatted, n)))
    print(f"\nbench.demo_prompts — {config.model}, untrained, {args.problems} problems × {n} samples "
          f"at temperature {config.temperature}")
    header = ("worked examples", "accuracy", "groups where accuracy varies", "format", "groups where format varies")
    print(markdown_table(header, [(examples, f"{acc:.3f}", f"{acc_varies:.0%}", f"{formatted:.3f}", f"{formatted_varies:.0%}")
                                  for examples, acc, acc_varies, formatted, formatted_varies in table]))


if __name__ == "__main__":
    main()
