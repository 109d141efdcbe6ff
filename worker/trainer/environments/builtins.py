"""The built-in environments: calculator tools and multi-turn feedback on answers.

Each is an Environment (base.py): the first messages of an episode, its reply to each assistant
turn, the tools it offers and what it adds to the rubric (a cost per tool call, a penalty per
extra attempt).
"""
from fractions import Fraction

from worker.trainer.environments.arithmetic_tool import CalculationError, calculate
from worker.trainer.environments.base import Environment, ExtraReward, Tool, prompt_messages
from worker.trainer.environments.catalog import CalculatorParams, FeedbackParams
from worker.trainer.rewards.answers import final_number

CALCULATOR = Tool("calculate", "Evaluates an arithmetic expression and returns the result.", "expression",
                  "The expression, e.g. 12 * (3 + 4)")


class CalculatorEnvironment(Environment):
    """The model may call calculate(expression), gets the result as a tool message, then answers.
    In the text format the instructions and one worked call come first, as earlier turns: a small
    model picks the protocol up from one example (bench/environments.py measures it)."""
    tools = (CALCULATOR,)

    def __init__(self, params: CalculatorParams, tool_format: str):
        self.params, self.tool_format = params, tool_format

    def start(self, row: dict, prompt) -> list[dict]:
        messages = prompt_messages(prompt)
        if self.tool_format == "hermes":
            return messages
        return [{"role": "system", "content": (
                    "You can use a calculator. To use it, write <calculate>EXPRESSION</calculate> and stop; the "
                    "result comes back to you. Then give the final answer as #### <number>.")},
                {"role": "user", "content": "What is 17 * 23?"},
                {"role": "assistant", "content": "<calculate>17 * 23</calculate>"},
                {"role": "tool", "content": "391"},
                {"role": "assistant", "content": "17 * 23 = 391\n#### 391"},
                *[m for m in messages if m["role"] != "system"]]

    def step(self, messages: list[dict], row: dict):
        calls = messages[-1].get("tool_calls") or []
        if not calls:
            return None  # an answer, not a call: the episode is done
        return [{"role": "tool", "name": call["name"], "content": self._result(call)} for call in calls]

    def _result(self, call: dict) -> str:
        try:
            return calculate(call.get("values", {}).get("expression", call.get("arguments", "")))[
                :self.params.max_result_chars]
        except CalculationError as exc:
            return f"error: {exc}"

    def extra_rewards(self) -> list[ExtraReward]:
        if not self.params.cost_per_call:
            return []
        cost = self.params.cost_per_call
        return [ExtraReward("tool_cost", lambda tool_calls, turns: -cost * tool_calls)]


class FeedbackEnvironment(Environment):
    """A wrong attempt is answered with feedback, up to max_turns attempts; a right one ends it."""

    def __init__(self, params: FeedbackParams):
        self.params = params

    def start(self, row: dict, prompt) -> list[dict]:
        return prompt_messages(prompt)

    def step(self, messages: list[dict], row: dict):
        gold = _number(final_number(str(row.get(self.params.answer_column, ""))))
        value = _number(final_number(messages[-1]["content"]))
        if value is None:
            return "I found no answer. Try again, and end with #### <number>."
        if value.denominator != 1 and gold is not None and gold.denominator == 1:
            return "That is not an integer. Try again."
        if gold is None or value == gold:
            return None
        return "Too high. Try again." if value > gold else "Too low. Try again."

    def extra_rewards(self) -> list[ExtraReward]:
        if not self.params.turn_penalty:
            return []
        penalty = self.params.turn_penalty
        return [ExtraReward("attempts", lambda tool_calls, turns: -penalty * max(0, turns - 1))]


def _number(written: str | None) -> Fraction | None:
    try:
        return Fraction(written) if written else None
    except (ValueError, ZeroDivisionError):
        return None
