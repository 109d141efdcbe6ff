"""Built-in dataset generators: datasets made from parameters, so a demo needs no download.

Each generator is a function of validated parameters returning rows (dicts
with a `prompt` column and whatever the reward functions need).
"""
import random
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, field_validator, model_serializer


class ArithmeticParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    count: int = Field(2000, ge=1, le=1_000_000, description="Number of problems.")
    difficulty: int = Field(1, ge=1, le=5, description="1: two small numbers; 5: four numbers up to 10,000.")
    seed: int = Field(0, ge=0, description="Same seed, same problems.")
    examples: int = Field(0, ge=0, le=5, description=(
        "Worked examples shown before each problem, as earlier chat turns. A small model takes the "
        "'#### <number>' answer format up from one; 0 gives the problem alone, as plain text."))
    largest: int | None = Field(None, ge=2, le=1_000_000, description=(
        "The largest number in a problem; none: the difficulty's (10 at 1, 100 at 2, ..., 10,000 at 4 and 5). "
        "Difficulty 1 up to 10 has only 200 distinct problems; up to 30, 1,800."))
    operators: str | None = Field(None, min_length=1, max_length=3, description=(
        "The operators problems use, among + - *, e.g. '+' for sums only; none: the difficulty's (+ and - at "
        "1, all three above). Two numbers up to 30 summed make 900 distinct problems."))

    @field_validator("operators")
    @classmethod
    def _known_operators(cls, operators: str | None) -> str | None:
        if operators is not None and (set(operators) - set(_OPERATORS) or len(set(operators)) < len(operators)):
            raise ValueError(f"{operators!r}: give each operator once, among {' '.join(_OPERATORS)}")
        return operators

    @model_serializer(mode="wrap")
    def _without_unset_fields(self, handler: SerializerFunctionWrapHandler) -> dict:
        """`largest` and `operators` left out when none: datasets stored before them keep their stored params."""
        dumped = handler(self)
        for name in ("largest", "operators"):
            if dumped.get(name) is None:
                dumped.pop(name, None)
        return dumped


_OPERATORS = ("+", "-", "*")


def _arithmetic_problem(rng: random.Random, difficulty: int, largest: int | None = None,
                        operators: str | None = None) -> tuple[str, int]:
    terms = 1 + min(difficulty, 3)
    limit = largest or 10 ** min(difficulty, 4)
    choices = tuple(operators) if operators else _OPERATORS[:2] if difficulty == 1 else _OPERATORS
    expression = str(rng.randint(1, limit))
    for _ in range(terms - 1):
        operator = rng.choice(choices)
        expression += f" {operator} {rng.randint(1, limit)}"
    # Evaluating our own generated digits-and-operators string is safe.
    return expression, eval(expression)  # noqa: S307


def _question(expression: str) -> str:
    return f"What is {expression}? Think briefly, then give the final answer as #### <number>."


def _worked_examples(rng: random.Random, params: ArithmeticParams) -> list[dict]:
    """`params.examples` solved problems as user and assistant turns, answered the way the format reward wants."""
    turns = []
    for _ in range(params.examples):
        expression, value = _arithmetic_problem(rng, params.difficulty, params.largest, params.operators)
        turns += [{"role": "user", "content": _question(expression)},
                  {"role": "assistant", "content": f"{expression} = {value}\n#### {value}"}]
    return turns


def arithmetic(params: ArithmeticParams) -> list[dict]:
    rng = random.Random(params.seed)
    # The examples are drawn from a stream of their own, so that a seed's problems are the same
    # with or without them (and a shorter count stays a prefix of a longer one either way).
    examples_rng = random.Random(f"arithmetic-examples-{params.seed}")
    rows = []
    for _ in range(params.count):
        expression, value = _arithmetic_problem(rng, params.difficulty, params.largest, params.operators)
        question = _question(expression)
        prompt = question if not params.examples else [
            *_worked_examples(examples_rng, params),
            {"role": "user", "content": question}]
        rows.append({"prompt": prompt, "answer": f"#### {value}"})
    return rows


# Each builder takes an instance of the params model beside it (Any: a mapping cannot tie the two).
GENERATORS: dict[str, tuple[type[BaseModel], Callable[[Any], list[dict]]]] = {
    "arithmetic": (ArithmeticParams, arithmetic),
}


def generate(name: str, params: dict) -> list[dict]:
    """Rows of generator `name`; raises KeyError for an unknown name, ValidationError for bad params."""
    params_model, build = GENERATORS[name]
    return build(params_model.model_validate(params))
