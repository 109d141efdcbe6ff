"""The calculator on what a model may write: sizes refused before they are computed, and every
failure (overflow, division by zero, complex results, nesting, non-text) a CalculationError that
the episode answers as a tool message, never an environment error that ends the episode."""
import asyncio

import pytest

from worker.trainer.environments import arithmetic_tool
from worker.trainer.environments.arithmetic_tool import CalculationError, calculate
from worker.trainer.environments.builtins import CalculatorEnvironment
from worker.trainer.environments.catalog import CalculatorParams
from worker.trainer.environments.episodes import EpisodeLimits, EpisodeRunner
from worker.trainer.rollout.groups import Completion


def test_ordinary_arithmetic_is_answered():
    assert [calculate(e) for e in ("17 * 23", "7 / 2", "2 ** 64", "-(3 - 5) % 3", "10 // 4", "1.5 * 2")] == \
        ["391", "3.5", "18446744073709551616", "2", "2", "3"]


def test_a_power_too_large_is_refused_before_it_is_computed(monkeypatch):
    computed = []
    monkeypatch.setitem(arithmetic_tool.OPERATORS, arithmetic_tool.ast.Pow,
                        lambda a, b: computed.append((a, b)) or a ** b)
    with pytest.raises(CalculationError, match="more than 4096 bits"):
        calculate("(((9**64)**64)**64)**64")
    assert computed == [(9, 64)]  # 9**64 (203 bits) only; (9**64)**64 was estimated, not computed


def test_a_product_too_large_is_refused_before_it_is_computed(monkeypatch):
    computed = []
    monkeypatch.setitem(arithmetic_tool.OPERATORS, arithmetic_tool.ast.Mult,
                        lambda a, b: computed.append((a, b)) or a * b)
    with pytest.raises(CalculationError, match="more than 4096 bits"):
        calculate("(2**64)**60 * (2**64)**60")
    assert computed == []


@pytest.mark.parametrize("expression,message", [
    ("1/0", "division by zero"),
    ("0 ** -1", "division by zero"),
    ("1e308 * 10", "not a finite number"),
    ("1e999", "not a finite number"),
    ("1e300 ** 2", "out of range"),
    ("(2**64)**63 / 3", "out of range"),
    ("(-8) ** 0.5", "not a real number"),
    ("2 ** 65", "exponent above 64"),
    ("-" * 60 + "1", "more than 40 operations nested"),
    ("(1+" * 45 + "1" + ")" * 45, "more than 40 operations nested"),
    ("2 + * 3", "cannot read"),
    ("9" * 201, "longer than 200 characters"),
    ("__import__('os')", "only numbers"),
    ("", "empty expression"),
])
def test_every_failure_is_a_calculation_error_that_says_why(expression, message):
    with pytest.raises(CalculationError, match=message):
        calculate(expression)


def test_an_expression_that_is_not_text_is_refused_and_a_number_is_read():
    assert calculate(12) == "12"
    with pytest.raises(CalculationError, match="must be text, not list"):
        calculate([1, 2])


class TypedServer:
    def __init__(self, turns):
        self.turns = list(turns)

    async def sample(self, prompt_ids, n, columns=None, overrides=None):
        return [Completion(token_ids=[], logprobs=[], text=self.turns.pop(0), finish_reason="stop")]


class NoTokens:
    takes_tools = False

    def reply_ids(self, context_ids, messages, reply):
        return []


@pytest.mark.parametrize("fmt,call", [
    ("text", "<calculate>(((9**64)**64)**64)**64</calculate>"),
    ("text", "<calculate>1e300 ** 2</calculate>"),
    ("hermes", '<tool_call>{"name": "calculate", "arguments": {"expression": [1]}}</tool_call>'),
])
def test_a_failing_call_is_answered_to_the_model_and_the_episode_goes_on(fmt, call):
    limits = EpisodeLimits(max_turns=4, max_tool_calls=4, max_turn_tokens=64, max_episode_tokens=512,
                           max_context=4096, timeout_s=5.0)
    runner = EpisodeRunner(CalculatorEnvironment(CalculatorParams(), fmt), NoTokens(), limits, fmt,
                           current_version=lambda: 0)
    messages = [{"role": "user", "content": "What is it?"}]
    episode = asyncio.run(runner.play(TypedServer([call, "#### 1"]), [], messages, {})).episode
    tool = [turn for turn in episode.turns if turn["role"] == "tool"]
    assert episode.end_reason == "done" and not episode.failed and episode.tool_errors == 1
    assert len(tool) == 1 and tool[0]["content"].startswith("error: ")
