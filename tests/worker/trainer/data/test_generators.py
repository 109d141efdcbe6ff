"""Built-in dataset generators: same seed, same rows; and every answer is right."""
import ast
import operator
import re

import pytest
from pydantic import ValidationError

from worker.trainer.data.generators import GENERATORS, generate
from worker.trainer.rewards.builtins import build_builtin

PROMPT = re.compile(r"^What is (?P<expr>[\d +\-*]+)\? ")
OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}


def evaluate(expression: str) -> int:
    """An independent evaluator for + - * on integers (no eval), with Python's precedence."""
    def walk(node):
        if isinstance(node, ast.BinOp) and type(node.op) in OPS:
            return OPS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        raise ValueError(f"unexpected {ast.dump(node)}")
    return walk(ast.parse(expression, mode="eval").body)


def test_the_same_seed_gives_the_same_rows():
    params = {"count": 50, "difficulty": 3, "seed": 7}
    assert generate("arithmetic", params) == generate("arithmetic", params)


def test_another_seed_gives_other_rows():
    assert generate("arithmetic", {"count": 50, "seed": 1}) != generate("arithmetic", {"count": 50, "seed": 2})


def test_a_shorter_count_is_a_prefix():
    # The upload preview shows the first rows of what the worker will train on.
    assert generate("arithmetic", {"count": 5, "seed": 3}) == generate("arithmetic", {"count": 40, "seed": 3})[:5]


@pytest.mark.parametrize("difficulty", [1, 2, 3, 4, 5])
def test_every_answer_is_correct(difficulty):
    rows = generate("arithmetic", {"count": 200, "difficulty": difficulty, "seed": difficulty})
    assert len(rows) == 200
    for row in rows:
        match = PROMPT.match(row["prompt"])
        assert match, row["prompt"]
        assert row["answer"] == f"#### {evaluate(match['expr'])}"
        assert "####" in row["prompt"], "the prompt must say how to format the answer"


@pytest.mark.parametrize("difficulty,terms,limit", [(1, 2, 10), (2, 3, 100), (5, 4, 10_000)])
def test_difficulty_sets_the_number_and_size_of_terms(difficulty, terms, limit):
    for row in generate("arithmetic", {"count": 100, "difficulty": difficulty}):
        numbers = [int(n) for n in re.findall(r"\d+", PROMPT.match(row["prompt"])["expr"])]
        assert len(numbers) == terms and all(1 <= n <= limit for n in numbers)


def test_difficulty_one_uses_only_addition_and_subtraction():
    expressions = [PROMPT.match(r["prompt"])["expr"] for r in generate("arithmetic", {"count": 300, "difficulty": 1})]
    assert not any("*" in e for e in expressions) and any("-" in e for e in expressions)


def test_worked_examples_come_before_the_problem_as_chat_turns():
    plain = generate("arithmetic", {"count": 20, "seed": 4})
    with_examples = generate("arithmetic", {"count": 20, "seed": 4, "examples": 2})
    for row, shown in zip(plain, with_examples):
        assert [turn["role"] for turn in shown["prompt"]] == ["user", "assistant", "user", "assistant", "user"]
        assert shown["prompt"][-1]["content"] == row["prompt"] and shown["answer"] == row["answer"]


def test_worked_examples_differ_from_row_to_row():
    rows = generate("arithmetic", {"count": 20, "examples": 1})
    assert len({row["prompt"][0]["content"] for row in rows}) > 10


@pytest.mark.parametrize("difficulty", [1, 3, 5])
def test_every_worked_example_is_right_and_earns_both_demo_rewards(difficulty):
    rows = generate("arithmetic", {"count": 50, "difficulty": difficulty, "examples": 1})
    questions = [row["prompt"][0]["content"] for row in rows]
    answers = [row["prompt"][1]["content"] for row in rows]
    for question, answer in zip(questions, answers):
        assert answer.endswith(f"\n#### {evaluate(PROMPT.match(question)['expr'])}")
    truth = [answer.splitlines()[-1] for answer in answers]
    assert build_builtin("accuracy", {})(questions, answers, answer=truth) == [1.0] * len(rows)
    assert build_builtin("format", {})(questions, answers) == [1.0] * len(rows)


def test_a_shorter_count_is_a_prefix_with_worked_examples_too():
    params = {"seed": 3, "examples": 1}
    assert generate("arithmetic", {**params, "count": 5}) == generate("arithmetic", {**params, "count": 40})[:5]


@pytest.mark.parametrize("params", [{"count": 0}, {"difficulty": 6}, {"seed": -1}, {"examples": 6}, {"colour": "red"},
                                    {"largest": 1}, {"largest": 2_000_000}, {"operators": "/"},
                                    {"operators": "++"}, {"operators": ""}, {"operators": "+-*+"}])
def test_bad_params_are_refused(params):
    with pytest.raises(ValidationError):
        generate("arithmetic", params)


def test_an_unknown_generator_is_a_key_error():
    with pytest.raises(KeyError):
        generate("sudoku", {})


def test_every_generator_has_defaults_and_a_prompt_column():
    for name, (params_model, _) in GENERATORS.items():
        rows = generate(name, {"count": 3} if "count" in params_model.model_fields else {})
        assert rows and all(isinstance(r["prompt"], str) and r["prompt"] for r in rows)


def test_largest_bounds_every_number_and_widens_the_problem_space():
    rows = generate("arithmetic", {"count": 3000, "difficulty": 1, "largest": 30, "examples": 1})
    expressions = [PROMPT.match(row["prompt"][-1]["content"])["expr"] for row in rows]
    numbers = [int(n) for expression in expressions for n in re.findall(r"\d+", expression)]
    assert max(numbers) == 30 and min(numbers) == 1
    assert len(set(expressions)) > 1000  # up to 10 there are 200 problems
    for row, expression in zip(rows, expressions):
        assert row["answer"] == f"#### {evaluate(expression)}"
        assert all(int(n) <= 30 for n in re.findall(r"\d+", row["prompt"][0]["content"]))  # the worked example too


def test_params_without_largest_are_stored_as_before():
    """A dataset stored before `largest` keeps its params (and the API's answer) unchanged."""
    from worker.trainer.data.generators import ArithmeticParams

    assert ArithmeticParams().model_dump() == {"count": 2000, "difficulty": 1, "seed": 0, "examples": 0}
    assert ArithmeticParams(largest=30).model_dump()["largest"] == 30


@pytest.mark.parametrize("operators", ["+", "-*", "*"])
def test_operators_limit_the_problems_and_their_worked_examples_to_them(operators):
    rows = generate("arithmetic", {"count": 300, "difficulty": 2, "operators": operators, "examples": 1})
    for row in rows:
        asked = PROMPT.match(row["prompt"][-1]["content"])["expr"]
        shown = row["prompt"][0]["content"]
        assert set(re.findall(r"[+\-*]", asked + PROMPT.match(shown)["expr"])) <= set(operators)
        assert row["answer"] == f"#### {evaluate(asked)}"


def test_sums_alone_up_to_30_make_900_distinct_problems():
    rows = generate("arithmetic", {"count": 5000, "difficulty": 1, "largest": 30, "operators": "+"})
    assert 890 < len({row["prompt"] for row in rows}) <= 900  # 30 × 30; 5000 draws may leave a few unseen


def test_params_without_operators_are_stored_as_before():
    from worker.trainer.data.generators import ArithmeticParams

    assert "operators" not in ArithmeticParams(largest=30).model_dump()
    assert ArithmeticParams(operators="+").model_dump()["operators"] == "+"
