"""The built-in reward functions. Each factory takes validated parameters (see catalog.py) and
returns a function with the user-code signature: reward(prompts, completions, **columns) → one
float or None ("not applicable") per completion.
"""
from collections.abc import Callable
from typing import Any

from worker.trainer.rewards.answers import answers_match, final_answer
from worker.trainer.rewards.catalog import (
    BUILTINS, REGEX_TIMEOUT_S, AccuracyParams, ExactMatchParams, FormatParams, LengthParams, RepetitionParams,
    compiled_pattern,
)

RewardFn = Callable[..., list[float | None]]


def _column(columns: dict, name: str, count: int) -> list:
    if name not in columns:
        raise KeyError(f"the dataset has no column {name!r} (columns: {', '.join(sorted(columns)) or 'none'})")
    values = list(columns[name])
    if len(values) != count:
        raise ValueError(f"column {name!r} has {len(values)} values for {count} completions")
    return values


def accuracy(params: AccuracyParams) -> RewardFn:
    def reward(prompts, completions, **columns):
        golds = _column(columns, params.answer_column, len(completions))
        scores: list[float | None] = []
        for completion, gold_text in zip(completions, golds):
            gold = final_answer(str(gold_text))
            if gold is None:
                scores.append(None)  # no reference answer: this function does not apply
                continue
            predicted = final_answer(completion)
            scores.append(1.0 if predicted is not None and answers_match(gold, predicted) else 0.0)
        return scores
    return reward


def exact_match(params: ExactMatchParams) -> RewardFn:
    def normalize(text: str) -> str:
        text = text.strip() if params.strip else text
        return text if params.case_sensitive else text.casefold()

    def reward(prompts, completions, **columns):
        expected = _column(columns, params.column, len(completions))
        return [float(normalize(c) == normalize(str(e))) for c, e in zip(completions, expected)]
    return reward


def format_(params: FormatParams) -> RewardFn:
    pattern = compiled_pattern(params.regex) if params.regex else None

    def score(completion: str) -> float:
        checks = [_tag_closed(completion, tag) for tag in params.tags]
        if pattern is not None:
            checks.append(_full_match(pattern, completion))
        if not checks:
            return 1.0
        if params.partial_credit:
            return sum(checks) / len(checks)
        return float(all(checks))

    def reward(prompts, completions, **columns):
        return [score(c) for c in completions]
    return reward


class RegexTimeout(ValueError):
    """A user's pattern that backtracks without end ((a+)+$ on a long completion) stops here."""


def _full_match(pattern, completion: str) -> bool:
    try:
        return pattern.fullmatch(completion, timeout=REGEX_TIMEOUT_S) is not None
    except TimeoutError:
        raise RegexTimeout(f"the format regex took longer than {REGEX_TIMEOUT_S:g} s on a completion of "
                           f"{len(completion)} characters; a pattern with nested repeats like (a+)+ "
                           "backtracks without end") from None


def _tag_closed(completion: str, tag: str) -> bool:
    """<tag> with </tag> somewhere after it; found without a regex, in one pass."""
    opened = completion.find(f"<{tag}>")
    return opened >= 0 and completion.find(f"</{tag}>", opened + len(tag) + 2) >= 0


def length(params: LengthParams) -> RewardFn:
    def score(tokens: int) -> float:
        if tokens < params.min_tokens:
            return tokens / params.min_tokens
        if tokens <= params.max_tokens:
            return 1.0
        if params.soft_penalty_tokens == 0:
            return 0.0
        return max(0.0, 1.0 - (tokens - params.max_tokens) / params.soft_penalty_tokens)

    def reward(prompts, completions, completion_lengths=None, **columns):
        # The trainer passes token counts; without them, words are a stand-in.
        counts = completion_lengths or [len(c.split()) for c in completions]
        return [score(n) for n in counts]
    return reward


def repetition(params: RepetitionParams) -> RewardFn:
    def score(completion: str) -> float:
        words = completion.split()
        ngrams = [tuple(words[i:i + params.ngram]) for i in range(len(words) - params.ngram + 1)]
        if not ngrams:
            return 0.0
        repeated = 1.0 - len(set(ngrams)) / len(ngrams)
        return params.max_penalty * repeated

    def reward(prompts, completions, **columns):
        return [score(c) for c in completions]
    return reward


# Each factory takes its own catalog params model (Any: a mapping cannot tie the two).
FACTORIES: dict[str, Callable[[Any], RewardFn]] = {"accuracy": accuracy, "exact_match": exact_match, "format": format_,
             "length": length, "repetition": repetition}
assert set(FACTORIES) == set(BUILTINS), "catalog and implementations must name the same built-ins"


def build_builtin(name: str, params: dict) -> RewardFn:
    return FACTORIES[name](BUILTINS[name].model_validate(params))
