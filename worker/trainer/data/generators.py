"""Built-in dataset generators: datasets made from parameters, so a demo needs no download.

Each generator is a function of validated parameters returning rows (dicts
with a `prompt` column and whatever the reward functions need).
"""
import random
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ArithmeticParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    count: int = Field(2000, ge=1, le=1_000_000, description="Number of problems.")
    difficulty: int = Field(1, ge=1, le=5, description="1: two small numbers; 5: four numbers up to 10,000.")
    seed: int = Field(0, ge=0, description="Same seed, same problems.")
    examples: int = Field(0, ge=0, le=5, description=(
        "Worked examples shown before each problem, as earlier chat turns. A small model takes the "
        "'#### <number>' answer format up from one; 0 gives the problem alone, as plain text."))


_OPERATORS = ("+", "-", "*")


def _arithmetic_problem(rng: random.Random, difficulty: int) -> tuple[str, int]:
    terms = 1 + min(difficulty, 3)
    limit = 10 ** min(difficulty, 4)
    expression = str(rng.randint(1, limit))
    for _ in range(terms - 1):
        operator = rng.choice(_OPERATORS[:2] if difficulty == 1 else _OPERATORS)
        expression += f" {operator} {rng.randint(1, limit)}"
    # Evaluating our own generated digits-and-operators string is safe.
    return expression, eval(expression)  # noqa: S307


def _question(expression: str) -> str:
    return f"What is {expression}? Think briefly, then give the final answer as #### <number>."


def _worked_examples(rng: random.Random, difficulty: int, count: int) -> list[dict]:
    """`count` solved problems as user and assistant turns, answered the way the format reward wants."""
    turns = []
    for _ in range(count):
        expression, value = _arithmetic_problem(rng, difficulty)
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
        expression, value = _arithmetic_problem(rng, params.difficulty)
        question = _question(expression)
        prompt = question if not params.examples else [
            *_worked_examples(examples_rng, params.difficulty, params.examples),
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
