"""How far vLLM's sampling log-probs are from the trainer's for a model: the importance ratio
the loss corrects for starts from this gap. Used by the family test on a real vLLM and by
bench/family_logprobs.py, which prints it for every family."""
from dataclasses import dataclass
from pathlib import Path

import httpx
import torch

from worker.trainer.training.batching import Row, micro_batches
from worker.trainer.config import TrainingConfig
from worker.trainer.training.policy import completion_logprobs
from worker.trainer.inference.completions_client import parse_choices

PROMPT = "What is 12 + 30? Think, then answer."
AGREEMENT_CONFIG = dict(max_prompt_length=64, max_completion_length=16, temperature=1.0, vllm_kv_cache_gib=1)


@dataclass
class Agreement:
    tokens: int
    max_abs_diff: float
    mean_abs_diff: float


def sample_from_server(url: str, model_name: str, prompt_ids: list[int], n: int = 4, max_tokens: int = 16):
    """n completions of the prompt at temperature 1, with their tokens and sampling log-probs."""
    response = httpx.post(f"{url}/v1/completions", timeout=120, json={
        "model": model_name, "prompt": prompt_ids, "n": n, "max_tokens": max_tokens, "temperature": 1.0,
        "logprobs": 0, "return_token_ids": True, "seed": 0})
    response.raise_for_status()
    return parse_choices(response.json())


def trainer_logprobs(model_dir: Path | str, prompt_ids: list[int], completions) -> list[list[float]]:
    """The trainer's log-probs of the same tokens, one completion a row, in fp32."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    rows = [Row(prompt_ids, c.token_ids, c.logprobs, 0.0, group=i) for i, c in enumerate(completions)]
    batch = micro_batches(rows, size=len(rows), pad_id=0, share_prompts=False)[0]
    with torch.no_grad():
        logp, _ = completion_logprobs(model, batch, temperature=1.0)
    ordered = sorted(rows, key=lambda row: row.length)  # how micro_batches lays rows out
    by_row = {id(row): logp[s, :len(row.completion_ids)].tolist() for s, row in enumerate(ordered)}
    return [by_row[id(row)] for row in rows]


def measure(model_dir: Path | str, url: str, model_name: str) -> Agreement:
    from transformers import AutoTokenizer

    prompt_ids = AutoTokenizer.from_pretrained(model_dir)(PROMPT, add_special_tokens=False).input_ids
    completions = sample_from_server(url, model_name, prompt_ids)
    ours = trainer_logprobs(model_dir, prompt_ids, completions)
    gaps = [abs(a - b) for c, row in zip(completions, ours) for a, b in zip(c.logprobs, row)]
    return Agreement(tokens=len(gaps), max_abs_diff=max(gaps), mean_abs_diff=sum(gaps) / len(gaps))


def agreement_config() -> TrainingConfig:
    return TrainingConfig(**AGREEMENT_CONFIG)
