"""Finding the final answer in a completion or a reference, the GSM8K way or the boxed way."""
import logging
import re

from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_EXPR = [ExprExtractionConfig()]
_LATEX = [LatexExtractionConfig()]
# It warns on every call that timeouts are off; we turn them off on purpose (see final_answer).
logging.getLogger("math_verify").setLevel(logging.ERROR)


def _plain_number(text: str) -> str | None:
    found = NUMBER.findall(text)
    return found[-1].replace(",", "") if found else None


def final_number(text: str) -> str | None:
    """The final answer as the number written: after the last '####', else the last number."""
    if "####" in text:
        tail = text.rsplit("####", 1)[1].strip().splitlines()
        return _plain_number(tail[0]) if tail else None
    return _plain_number(text)


def final_answer(text: str):
    """Parsed final answer: after the last '####', else a \\boxed{} value, else the last number.

    Returns math-verify's parse (a non-empty list) or None when there is no answer.
    Timeouts are off: math-verify's use signal.alarm, which only works in the main
    thread, and rollouts score in a background thread.
    """
    if "####" in text:
        tail = text.rsplit("####", 1)[1].strip().splitlines()
        number = _plain_number(tail[0]) if tail else None
        return _parse(number, _EXPR) if number else None
    if "\\boxed" in text:
        return _parse(text, _LATEX)
    number = _plain_number(text)
    return _parse(number, _EXPR) if number else None


def _parse(text: str, config):
    parsed = parse(text, extraction_config=config, parsing_timeout=None)
    return parsed or None


def answers_match(gold, predicted) -> bool:
    return verify(gold, predicted, timeout_seconds=None)
