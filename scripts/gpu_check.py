"""The prepared check for a lent GPU: the trainer's GPU paths on tiny models, in a few minutes.

Each row of the printed table (also DIR/gpu_check.md with --out) proves one thing: the training
step (full and LoRA, bf16, with a KL reference), the trainer's log-probs (packed and one per row)
against the model's own forward, a checkpoint round trip, a reward model on the device. Exit
status 1 when a row FAILED. A lent machine lacks pydantic: carry its wheels in .whl and install
them first. Here, on the CPU (fp32 unless --bf16): .venv/bin/python -m scripts.gpu_check --device cpu

The commands, and what each row checks: docs/deploying/gpus.md#the-prepared-check
"""
import argparse
import math
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch loads only once the device is chosen (main)
    import torch

# Largest |trainer - plain forward| log-prob, and |batched - single| reward-model score, that
# passes. fp32 differs only by summation order; bf16 rounds each activation to 8 bits of mantissa
# (2e-3 seen on a CPU). A masking or position bug moves the tiny model's log-probs by about 0.2
# (one prompt token lost), so even bf16's bound catches one.
TOLERANCE = {"fp32": 1e-4, "bf16": 5e-2}
LEARNING_RATE = 1e-3  # large enough that one step visibly moves a tiny model's weights
PROMPT_TOKENS, COMPLETION_TOKENS, GENERATIONS = 12, (5, 10), 4


@dataclass
class Result:
    name: str
    ok: bool
    figure: str  # what was measured, or why it failed
    seconds: float = 0.0


Outcome = tuple[bool, str]  # what a check returns: passed, and the figure (or the problems)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=("cuda", "cpu"), default=None, help="default: cuda where there is one")
    parser.add_argument("--out", type=Path, metavar="DIR", help="also write the report to DIR/gpu_check.md")
    parser.add_argument("--bf16", action="store_true", help="on a CPU, train and compare in bf16 too (slow)")
    return parser.parse_args(argv)


# --- what every check trains on -------------------------------------------------------------

def synthetic_groups(vocab_size: int, seed: int = 0) -> list:
    """One prompt's completions of distinct lengths, rewards alternating 1 and 0 (so every
    advantage is non-zero and the first step has a gradient)."""
    import random

    from worker.trainer.rollout.groups import Completion, Group

    rng = random.Random(seed)
    tokens = lambda count: [rng.randrange(3, vocab_size) for _ in range(count)]  # noqa: E731 (past the specials)
    lengths = [COMPLETION_TOKENS[0] + i for i in range(GENERATIONS)]
    completions = [Completion(tokens(n), [-1.0] * n, "", "length") for n in lengths]
    group = Group(0, "", tokens(PROMPT_TOKENS), {}, completions, model_version=0)
    group.totals = [float(i % 2 == 0) for i in range(GENERATIONS)]
    return [group]


def training_config(model_dir: Path, bf16: bool, lora: bool):
    from worker.trainer.config import TrainingConfig

    return TrainingConfig(model=str(model_dir), bf16="on" if bf16 else "off", lora=lora, beta=0.04,
                          learning_rate=LEARNING_RATE, num_generations=GENERATIONS,
                          per_device_train_batch_size=2, gradient_accumulation_steps=GENERATIONS // 2,
                          max_steps=10, max_completion_length=COMPLETION_TOKENS[1], max_grad_norm=1.0)


def snapshot(*modules) -> dict[str, "torch.Tensor"]:
    """Every parameter of `modules` copied to the CPU, by module index and name."""
    return {f"{i}.{name}": p.detach().float().cpu().clone()
            for i, module in enumerate(m for m in modules if m is not None)
            for name, p in module.named_parameters()}


def train_steps(parts, config, steps: int) -> list[dict]:
    from worker.trainer.training.step import batch_advantages, train_step

    ctx = parts.training_context(config)
    vocab = parts.model.get_input_embeddings().num_embeddings
    return [train_step(ctx, groups, batch_advantages(groups, GENERATIONS, config.scale_rewards))
            for groups in (synthetic_groups(vocab, seed) for seed in range(steps))]


# --- the checks -----------------------------------------------------------------------------

def check_training(model_dir: Path, bf16: bool, lora: bool) -> Outcome:
    import torch

    from worker.trainer.training.setup import build_training_parts

    config = training_config(model_dir, bf16, lora)
    parts = build_training_parts(str(model_dir), config)
    separate_reference = parts.ref_model if parts.ref_model is not parts.model else None
    trained = {f"0.{n}" for n, p in parts.model.named_parameters() if p.requires_grad}
    before = snapshot(parts.model, separate_reference)
    metrics = train_steps(parts, config, steps=2)
    after = snapshot(parts.model, separate_reference)
    moved = {name for name in before if not torch.equal(before[name], after[name])}
    losses = [m["train/loss"] for m in metrics]
    kl = metrics[-1].get("train/kl_to_reference", float("nan"))
    problems = [f"loss {loss}" for loss in losses if not math.isfinite(loss)]
    problems += [] if math.isfinite(kl) and kl >= 0 else [f"KL to the reference {kl}"]
    problems += [] if moved & trained else ["no trained parameter moved"]
    problems += [f"{len(moved - trained)} frozen tensors moved"] if moved - trained else []
    figure = (f"loss {losses[-1]:.4g}, KL {kl:.2g}, {len(moved & trained)}/{len(trained)} trained moved, "
              f"{len(before) - len(trained)} frozen kept")
    return not problems, "; ".join(problems) or figure


def plain_logprobs(model, prompt: list[int], completion: list[int], device: str) -> "torch.Tensor":
    """The model's own forward on prompt + completion: log_softmax of the logits that predict
    each completion token, gathered at it."""
    import torch

    ids = torch.tensor([prompt + completion], device=device)
    logits = model(input_ids=ids).logits[0, len(prompt) - 1:-1].float()
    return torch.log_softmax(logits, dim=-1).gather(1, ids[0, len(prompt):, None]).squeeze(1)


def check_logprobs(model_dir: Path, device: str, dtype: str, packed: bool) -> Outcome:
    import torch
    from transformers import AutoModelForCausalLM

    from worker.trainer.training.batching import micro_batches, rows_of
    from worker.trainer.training.policy import completion_logprobs

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).to(device).eval()
    groups = synthetic_groups(model.config.vocab_size)
    rows = rows_of(groups, torch.zeros(GENERATIONS))
    batch = micro_batches(rows, len(rows), model.config.pad_token_id or 0, share_prompts=packed)[0].to(device)
    autocast = torch.autocast(torch.device(device).type, dtype=torch.bfloat16, enabled=dtype == "bf16")
    with torch.no_grad(), autocast:
        trainer, _ = completion_logprobs(model, batch, temperature=1.0)
        plain = {tuple(row.completion_ids): plain_logprobs(model, row.prompt_ids, row.completion_ids, device)
                 for row in rows}
    worst = 0.0
    for s in range(batch.mask.shape[0]):  # the batch orders completions its own way: matched by tokens
        where = batch.mask[s].bool()
        expected = plain[tuple(batch.targets[s][where].tolist())]
        worst = max(worst, (trainer[s][where] - expected).abs().max().item())
    attention = model.config._attn_implementation
    figure = f"max |diff| {worst:.2e} (tolerance {TOLERANCE[dtype]:.0e}), {attention} attention"
    return worst <= TOLERANCE[dtype], figure


def check_checkpoint(model_dir: Path, work: Path, bf16: bool) -> Outcome:
    from worker.trainer.checkpoints.saving import TrainerState, load_trainer_state, save_checkpoint
    from worker.trainer.training.setup import build_training_parts

    config = training_config(model_dir, bf16, lora=False)
    parts = build_training_parts(str(model_dir), config)
    train_steps(parts, config, steps=1)
    saved = TrainerState(step=1, model_version=1, data_position=GENERATIONS)
    folder = save_checkpoint(work / "run", saved, parts.unwrapped_model(), parts.tokenizer, parts.optimizer,
                             parts.scheduler)
    resumed = build_training_parts(str(model_dir), config, resume_from=str(folder))
    loaded = load_trainer_state(folder, resumed.unwrapped_model(), resumed.optimizer, resumed.scheduler)
    weights = tensors_differing(parts.model.state_dict(), resumed.model.state_dict())
    optimizer = tensors_differing(parts.optimizer.state_dict(), resumed.optimizer.state_dict())
    problems = [f"{weights} weight tensors differ"] if weights else []
    problems += [f"{optimizer} optimizer values differ"] if optimizer else []
    problems += [] if loaded == saved else [f"state {loaded} after saving {saved}"]
    count = sum(parameter.numel() for parameter in parts.model.parameters())
    figure = f"{count:,} weights, {len(parts.optimizer.state_dict()['state'])} optimizer states, step {loaded.step}"
    return not problems, "; ".join(problems) or figure


def tensors_differing(saved, loaded) -> int:
    """How many values (tensors and others, in nested dicts and lists) differ between two
    states; a key or an item only one of them has counts as one."""
    import torch

    if isinstance(saved, dict) and isinstance(loaded, dict):
        return (len(saved.keys() ^ loaded.keys())
                + sum(tensors_differing(saved[key], loaded[key]) for key in saved.keys() & loaded.keys()))
    if isinstance(saved, (list, tuple)) and isinstance(loaded, (list, tuple)):
        return abs(len(saved) - len(loaded)) + sum(map(tensors_differing, saved, loaded))
    if isinstance(saved, torch.Tensor) and isinstance(loaded, torch.Tensor):
        return int(not torch.equal(saved.cpu(), loaded.cpu()))
    return int(saved != loaded)


def check_reward_model(model_dir: Path, device: str) -> Outcome:
    from worker.trainer.rewards.judges.catalog import RewardModelParams
    from worker.trainer.rewards.judges.reward_model import RewardModel

    scorer = RewardModel("gpu-check", RewardModelParams(model=str(model_dir), chat_template=False), device=device)
    prompts = ["What is 2 + 3?", "Name a prime number above ten.", "Spell 'cat' backwards.", "Why?"]
    completions = ["5", "Thirteen is one, and so is seventeen.", "tac", "Because the question asked for it."]
    batched = scorer(prompts, completions)
    single = [scorer([prompt], [completion])[0] for prompt, completion in zip(prompts, completions)]
    dtype = "bf16" if device == "cuda" else "fp32"  # what RewardModel loads in on each
    worst = max(abs(a - b) for a, b in zip(batched, single))
    ok = all(math.isfinite(score) for score in batched + single) and worst <= TOLERANCE[dtype]
    figure = f"{len(batched)} scores, max |batched - single| {worst:.2e} (tolerance {TOLERANCE[dtype]:.0e}, {dtype})"
    return ok, figure


def timed(name: str, check: Callable[[], Outcome]) -> Result:
    """The check's row with its seconds; an exception fails it, its first line the figure
    (the whole traceback on stderr)."""
    started = time.perf_counter()
    try:
        ok, figure = check()
    except Exception as exc:
        traceback.print_exc()
        ok, figure = False, f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
    return Result(name, ok, figure, time.perf_counter() - started)


# --- the models, the device and the report --------------------------------------------------

def tokenizer_source(work: Path) -> tuple[Path, str]:
    """A folder holding SmolLM2's tokenizer where this machine has it, else a byte-level one."""
    from worker.trainer.models.prepare import GgufNotFoundError
    from worker.trainer.models.tiny import load_tokenizer

    try:
        tokenizer, which = load_tokenizer(), "SmolLM2's"
    except (GgufNotFoundError, OSError) as exc:
        print(f"no SmolLM2 tokenizer here ({exc}): a byte-level one instead", file=sys.stderr)
        tokenizer, which = byte_level_tokenizer(), "byte-level, built here"
    tokenizer.save_pretrained(work / "tokenizer")
    return work / "tokenizer", which


def byte_level_tokenizer():
    """A tokenizer of the 256 bytes and three specials (pad 0, bos 1, eos 2): any text, offline."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "<s>", "</s>"]
    vocab = {token: i for i, token in enumerate(specials + sorted(pre_tokenizers.ByteLevel.alphabet()))}
    core = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    core.pre_tokenizer, core.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", bos_token="<s>", eos_token="</s>")


def build_reward_model(folder: Path, tokenizer_dir: Path) -> Path:
    """A random one-output sequence classifier of the tiny Llama's family, with the tokenizer."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from worker.trainer.models.tiny import tiny_family_config

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    config = tiny_family_config("llama", len(tokenizer), num_labels=1)
    config.pad_token_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    AutoModelForSequenceClassification.from_config(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def device_facts(device: str) -> list[str]:
    import torch
    import transformers

    if device == "cuda":
        properties = torch.cuda.get_device_properties(0)
        name, memory = properties.name, properties.total_memory
        bf16 = torch.cuda.is_bf16_supported()
    else:
        name, memory = f"{platform.processor() or platform.machine()} CPU, {os.cpu_count()} cores", (
            os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
        bf16 = torch.ops.mkldnn._is_mkldnn_bf16_supported()
    return [f"torch {torch.__version__} ({f'CUDA {torch.version.cuda}' if torch.version.cuda else 'no CUDA'}), "
            f"transformers {transformers.__version__}, Python {platform.python_version()}",
            f"device: {name}, {memory / 2 ** 30:.1f} GiB, bf16 {'supported' if bf16 else 'not supported'}"]


def run_checks(device: str, bf16: bool, work: Path) -> tuple[list[str], list[Result]]:
    from worker.trainer.models.tiny import build_tiny_model

    tokenizer_dir, which = tokenizer_source(work)
    policy = build_tiny_model(work / "policy", tokenizer_source=tokenizer_dir)
    reward_model = build_reward_model(work / "reward-model", tokenizer_dir)
    dtypes = ["fp32", "bf16"] if bf16 else ["fp32"]
    checks = {
        "training step, full": lambda: check_training(policy, bf16, lora=False),
        "training step, LoRA": lambda: check_training(policy, bf16, lora=True),
        **{f"log-probs {dtype}, {'packed' if packed else 'one per row'}":
           (lambda dtype=dtype, packed=packed: check_logprobs(policy, device, dtype, packed))
           for dtype in dtypes for packed in (True, False)},
        "checkpoint round trip": lambda: check_checkpoint(policy, work, bf16),
        "reward model": lambda: check_reward_model(reward_model, device),
    }
    header = [*device_facts(device), f"training in {'bf16' if bf16 else 'fp32'}; tokenizer {which}"]
    return header, [timed(name, check) for name, check in checks.items()]


def report(header: list[str], results: list[Result]) -> str:
    from bench.report import markdown_table

    rows = [(r.name, "ok" if r.ok else "FAILED", r.figure, f"{r.seconds:.1f}") for r in results]
    return "\n".join(["# GPU check", "", *[f"- {line}" for line in header], "",
                      markdown_table(("check", "result", "measured", "seconds"), rows)])


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.device == "cpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # before torch starts: accelerate then trains on the CPU
    import torch
    from transformers.utils import logging

    logging.disable_progress_bar()  # a bar per model loaded and saved would bury the table
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda: torch sees no CUDA device here (torch.cuda.is_available() is False)")
    work = Path(tempfile.mkdtemp(prefix="gpu-check-")).resolve()
    # The tiny models live in this folder, which the trainer must be allowed to load from (models/paths.py).
    os.environ["MODEL_DIRS"] = ",".join(filter(None, [os.environ.get("MODEL_DIRS", ""), str(work)]))
    try:
        header, results = run_checks(device, bf16=device == "cuda" or args.bf16, work=work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = report(header, results)
    print(text)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "gpu_check.md").write_text(text + "\n")
    return 0 if all(result.ok for result in results) else 1


if __name__ == "__main__":
    sys.exit(main())
