"""A reward model: a transformers sequence-classification model whose one output is the reward.

It is loaded on the trainer's device like the policy (its `model` resolved by
worker/trainer/models/paths.py, so a run may name a hub id, a prepared model or a path in
MODEL_DIRS, and nothing else) and refused before it scores anything when its head is not a
single score: a two-label classifier or a causal LM would give numbers that mean nothing.

Pairs are scored in batches of `batch_size`, padded on the right so that each token keeps the
position it has alone (batched scores equal one-at-a-time scores) and cut from the left to
`max_length`, so that the completion, which is what is judged, is always seen whole. A lock
serialises the forward passes: two scoring threads share one model.
"""
import logging
import math
import threading
import time
from collections.abc import Sequence

from worker.trainer.models.paths import resolve_model_path
from worker.trainer.rewards.judges.catalog import RewardModelParams

log = logging.getLogger(__name__)

CLASSIFIER_SUFFIX = "ForSequenceClassification"


class RewardModelRefused(ValueError):
    """The model cannot give one score per (prompt, completion); the message says its shape."""


def head_shape(model) -> tuple[int, int] | None:
    """(in_features, out_features) of the model's output layer, its last Linear (the `score` of
    decoder families, the `classifier` or its `out_proj` of encoders); None if it has none."""
    import torch

    linears = [module for module in model.modules() if isinstance(module, torch.nn.Linear)]
    return (linears[-1].in_features, linears[-1].out_features) if linears else None


def refusal_of_config(model: str, config) -> str | None:
    """Why a checkpoint with this config is no reward model, from its config alone (before loading)."""
    architectures = list(getattr(config, "architectures", None) or [])
    if config.num_labels != 1:
        return (f"reward model {model!r} gives {config.num_labels} scores per input (num_labels={config.num_labels}): "
                "a reward model must give exactly one (num_labels=1)")
    if architectures and not any(name.endswith(CLASSIFIER_SUFFIX) for name in architectures):
        return (f"reward model {model!r} is a {', '.join(architectures)}, not a sequence-classification model: "
                "its score head would be random weights")
    return None


def refusal_of_head(model: str, loaded) -> str | None:
    shape = head_shape(loaded)
    if shape is not None and shape[1] != 1:
        return (f"reward model {model!r} has a score layer of shape {shape[0]}→{shape[1]}: a reward model must "
                "give exactly one score (out_features 1)")
    return None


class RewardModel:
    """A reward callable, `fn(prompts, completions, **columns) -> list[float]`, safe from several threads."""

    def __init__(self, name: str, params: RewardModelParams, device: str = "cpu"):
        import torch
        from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

        self.name, self.params, self.device = name, params, device
        path = resolve_model_path(params.model)  # ModelRefused / ModelNotFoundError, as for the policy
        if refusal := refusal_of_config(params.model, AutoConfig.from_pretrained(path)):
            raise RewardModelRefused(refusal)
        dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
        model = AutoModelForSequenceClassification.from_pretrained(path, dtype=dtype)
        if refusal := refusal_of_head(params.model, model):
            raise RewardModelRefused(refusal)
        self.tokenizer = self._tokenizer(AutoTokenizer.from_pretrained(path))
        if model.config.pad_token_id is None:  # else transformers refuses batches above one
            model.config.pad_token_id = self.tokenizer.pad_token_id
        self.model = model.to(device).eval()
        self._lock = threading.Lock()
        self._calls = self._completions = 0
        self._seconds = 0.0

    @staticmethod
    def _tokenizer(tokenizer):
        if tokenizer.pad_token is None:
            if tokenizer.eos_token is None:
                raise RewardModelRefused("the reward model's tokenizer has neither a pad nor an end-of-sequence "
                                         "token to pad a batch with")
            tokenizer.pad_token = tokenizer.eos_token
        tokenizer.padding_side = "right"  # each token at the position it has alone
        tokenizer.truncation_side = "left"  # the completion is never cut; the prompt's start is
        return tokenizer

    def __call__(self, prompts: Sequence[str], completions: Sequence[str], task_prompts: Sequence[str] | None = None,
                 **columns) -> list[float]:
        """The reward of each completion; `task_prompts` (the raw task prompt, where the caller has
        it) is scored instead of `prompts` (which may be chat-rendered text)."""
        prompts = task_prompts if task_prompts is not None else prompts
        if len(prompts) != len(completions):
            raise ValueError(f"reward model {self.name!r}: {len(prompts)} prompts for {len(completions)} completions")
        texts = [self.text(prompt, completion) for prompt, completion in zip(prompts, completions)]
        size = self.params.batch_size
        with self._lock:
            if self.model is None:
                raise RuntimeError(f"reward model {self.name!r} was closed")
            started = time.perf_counter()
            scores = [score for start in range(0, len(texts), size)
                      for score in self._scores(texts[start:start + size])]
            self._seconds += time.perf_counter() - started
            self._calls += 1
            self._completions += len(texts)
        return scores

    def text(self, prompt: str, completion: str) -> str:
        """What the model reads: the conversation as its chat template writes it, where it has one
        and the params ask for it; else the prompt and the completion joined."""
        if self.params.chat_template and self.tokenizer.chat_template:
            messages = [{"role": "user", "content": prompt}, {"role": "assistant", "content": completion}]
            return self.tokenizer.apply_chat_template(messages, tokenize=False)
        return prompt + completion

    def _scores(self, texts: list[str]) -> list[float]:
        import torch

        # A chat template writes its own special tokens; plain text gets the tokenizer's.
        special = not (self.params.chat_template and self.tokenizer.chat_template)
        batch = self.tokenizer(texts, padding=True, truncation=True, max_length=self.params.max_length,
                               add_special_tokens=special, return_tensors="pt").to(self.device)
        with torch.no_grad():
            logits = self.model(**batch).logits.float()
        return [self._value(logit) for logit in logits[:, 0].tolist()]

    def _value(self, logit: float) -> float:
        value = logit - self.params.offset
        return 0.5 * (1.0 + math.tanh(value / 2)) if self.params.sigmoid else value  # sigmoid, never overflows

    def take_metrics(self) -> dict[str, float]:
        """Since the last call: scoring calls, completions scored, seconds in the model and its rate."""
        with self._lock:
            calls, completions, seconds = self._calls, self._completions, self._seconds
            self._calls = self._completions = 0
            self._seconds = 0.0
        return {"calls": float(calls), "completions": float(completions), "seconds": seconds,
                "completions_per_s": completions / seconds if seconds > 0 else 0.0}

    def close(self) -> None:
        """Frees the model; a later call raises."""
        with self._lock:
            self.model = None
