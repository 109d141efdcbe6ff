"""The built-in environments and their parameters: one definition validates the API's input and
the worker's launch spec (builtins.py implements them)."""
from pydantic import BaseModel, ConfigDict, Field


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CalculatorParams(_Params):
    cost_per_call: float = Field(0.0, ge=0.0, le=10.0, description="Taken off the episode's reward per tool call "
                                 "(the tool_cost reward reads it).")
    max_result_chars: int = Field(200, ge=1, le=100_000, description="A result longer than this is cut.")


class FeedbackParams(_Params):
    turn_penalty: float = Field(0.0, ge=0.0, le=10.0, description="Taken off the reward per extra attempt "
                                "(the attempts reward reads it).")
    answer_column: str = Field("answer", max_length=200,
                               description="The column with the right answer ('#### 42' understood).")


BUILTIN_ENVIRONMENTS: dict[str, type[_Params]] = {"calculator": CalculatorParams, "feedback": FeedbackParams}
DESCRIPTIONS = {
    "calculator": "The model may call calculate(expression) and gets the result back as a tool message, then answers.",
    "feedback": "A wrong answer is told 'too high', 'too low', 'not an integer' or 'try again', up to max_turns turns.",
}
