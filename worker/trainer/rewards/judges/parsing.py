"""A judge's answer as a number, and the constraint that makes the answer easy to read.

Where the server can constrain the answer (vLLM's `structured_outputs`; elsewhere an
OpenAI-style `response_format` JSON schema), the judge is asked for exactly what the parser
reads. The parser still reads defensively, because a hosted endpoint may ignore the schema and
a judge may be unconstrained: it accepts the JSON it asked for, a bare answer, or the first
readable answer in free text, and raises UnreadableAnswer otherwise (the caller gives None).
"""
import itertools
import json
import math
import re

from worker.trainer.rewards.judges.catalog import JudgeParams

NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
SPELLED_OUT_MAX = 100  # whole numbers a score regex lists one by one
FRACTION_DIGITS = 2  # a constrained score: at most this many decimals
# A JSON schema cannot ask for distinct items that vLLM's grammar enforces; up to this group size
# the schema lists every order of the group instead (5! = 120 alternatives), so a constrained
# ranking is always a permutation. Larger groups get items from 1..n and the parser checks.
ORDERS_MAX_GROUP = 5


class UnreadableAnswer(ValueError):
    """The answer holds nothing the parser can read as this judge's answer; the message says why."""


def rank_answer_tokens(params: JudgeParams, group_size: int) -> int:
    """A ranking needs room for its numbers: about 4 tokens each and 8 for the JSON around them,
    so a rank judge answers in at least that many tokens whatever max_answer_tokens says."""
    return max(params.max_answer_tokens, 8 + 4 * group_size)


# --- constraints ------------------------------------------------------------------------------

def score_regex(params: JudgeParams) -> str:
    """A number on the scale, as the scale writes it. On a scale of whole ends up to
    SPELLED_OUT_MAX values wide, exactly the numbers on it (0..10: 0 to 9 with up to two
    decimals, or 10), so that a constrained judge cannot answer past its end; elsewhere as many
    integer digits as the ends have, two decimals at most, a sign only where the scale goes below
    zero (a model cannot run on in digits; the parser refuses what lies off the scale)."""
    low, high = params.scale_min, params.scale_max
    if low.is_integer() and high.is_integer() and high - low <= SPELLED_OUT_MAX:
        fraction = rf"(\.[0-9]{{1,{FRACTION_DIGITS}}})?"
        below_top = "|".join(_integer_pattern(value) + (fraction if value >= 0 else "")
                             for value in range(int(high) - 1, int(low) - 1, -1))
        return rf"({_integer_pattern(int(high))}|{below_top})" if below_top else _integer_pattern(int(high))
    digits = max(len(str(int(abs(bound)))) for bound in (low, high))
    sign = "-?" if low < 0 else ""
    return rf"{sign}[0-9]{{1,{digits}}}(\.[0-9]{{1,{FRACTION_DIGITS}}})?"


def _integer_pattern(value: int) -> str:
    return str(value)  # a minus sign outside a character class is itself


def schema(params: JudgeParams, group_size: int = 0, orders: bool = False) -> dict:
    """The JSON schema of the answer (response_format elsewhere; vLLM's `json` for a ranking, with
    `orders`: every permutation of a small group listed)."""
    properties: dict[str, dict[str, object]]
    if params.mode == "score":
        properties = {"score": {"type": "number"}}
    elif params.mode == "choice":
        properties = {"choice": {"type": "string", "enum": list(params.labels)}}
    elif orders and group_size <= ORDERS_MAX_GROUP:
        permutations = itertools.permutations(range(1, group_size + 1))
        properties = {"ranking": {"enum": [list(order) for order in permutations]}}
    else:
        properties = {"ranking": {"type": "array", "items": {"enum": list(range(1, group_size + 1))},
                                  "minItems": group_size, "maxItems": group_size}}
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def constraint(params: JudgeParams, vllm: bool, group_size: int = 0) -> dict:
    """The request fields that constrain the answer ({} when the judge is unconstrained)."""
    if not params.constrained:
        return {}
    if vllm:
        if params.mode == "score":
            return {"structured_outputs": {"regex": score_regex(params)}}
        if params.mode == "choice":
            return {"structured_outputs": {"choice": list(params.labels)}}
        # No whitespace between the tokens: a small judge that pads its JSON runs out of max_tokens.
        return {"structured_outputs": {"json": schema(params, group_size, orders=True), "disable_any_whitespace": True}}
    return {"response_format": {"type": "json_schema", "json_schema": {
        "name": f"judge_{params.mode}", "strict": True, "schema": schema(params, group_size)}}}


# --- parsing ----------------------------------------------------------------------------------

def parse_score(raw: str, params: JudgeParams) -> float:
    """The score mapped from [scale_min, scale_max] to 0..1. A score outside the scale is refused
    (UnreadableAnswer), not clipped: a judge that answers 11 on 0..10 did not follow the scale,
    and clipping would pay it the top reward for that."""
    found = _json_field(raw, "score")
    if found is None:
        match = NUMBER.search(raw)
        if not match:
            raise UnreadableAnswer("no number in the answer")
        found = match.group()
    try:
        score = float(found)
    except (TypeError, ValueError):
        raise UnreadableAnswer(f"the score {found!r} is not a number") from None
    if not math.isfinite(score) or not params.scale_min <= score <= params.scale_max:
        raise UnreadableAnswer(f"the score {score:g} is outside the scale "
                               f"[{params.scale_min:g}, {params.scale_max:g}]")
    return (score - params.scale_min) / (params.scale_max - params.scale_min)


def _norm(text: str) -> str:
    return " ".join(text.casefold().split()).strip(" \t\n\"'`.,;:!*()[]")


def parse_choice(raw: str, params: JudgeParams) -> float:
    """The chosen label's value; labels match regardless of case, spacing and quotes around them.
    In free text, a label standing alone as a word is read only where exactly one label appears."""
    labels = {_norm(label): value for label, value in params.labels.items()}
    found = _json_field(raw, "choice")
    answer = _norm(found if isinstance(found, str) else raw)
    if answer in labels:
        return labels[answer]
    mentioned = {label for label in labels if re.search(rf"(?<!\w){re.escape(label)}(?!\w)", answer)}
    if len(mentioned) == 1:
        return labels[mentioned.pop()]
    shown = ", ".join(params.labels)
    if mentioned:
        raise UnreadableAnswer(f"the answer names several labels ({', '.join(sorted(mentioned))})")
    raise UnreadableAnswer(f"the answer is none of the labels ({shown})")


def parse_rank(raw: str, group_size: int) -> list[float]:
    """Each completion's reward from a ranking best first (a permutation of 1..n): the best 1.0,
    the worst 0.0, linearly between. Anything but a permutation is refused for the whole group."""
    found = _json_field(raw, "ranking")
    if found is None:
        found = _json_value(raw)
    if not isinstance(found, list):
        found = [float(number) for number in NUMBER.findall(raw)]
    try:
        ranking = [int(item) for item in found if float(item) == int(item)]
    except (TypeError, ValueError):
        raise UnreadableAnswer("the ranking holds something other than numbers") from None
    if len(ranking) != len(found) or sorted(ranking) != list(range(1, group_size + 1)):
        raise UnreadableAnswer(f"the ranking {found} is not an order of the completions 1..{group_size}")
    values = [0.0] * group_size
    for position, number in enumerate(ranking):
        values[number - 1] = 1.0 - position / (group_size - 1) if group_size > 1 else 1.0
    return values


def _json_value(raw: str):
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        start, end = raw.find("{"), raw.rfind("}")  # a JSON object inside prose or a code fence
        if 0 <= start < end:
            try:
                return json.loads(raw[start:end + 1])
            except (ValueError, RecursionError):
                return None
        return None


def _json_field(raw: str, field: str):
    value = _json_value(raw)
    return value.get(field) if isinstance(value, dict) else None
