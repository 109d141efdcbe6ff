"""Static checks of user reward code: each problem says which line to fix and how."""
import pytest

from worker.trainer.rewards.source_check import SIGNATURE, source_problems

GOOD = """
import math

def helper(text):
    return len(text)

def reward(prompts, completions, answer=None, **columns):
    return [math.tanh(helper(c)) for c in completions]
"""


def test_good_code_has_no_problems():
    assert source_problems(GOOD) == []


@pytest.mark.parametrize("source", ["", "   ", "\n\n\t\n"])
def test_empty_code_asks_for_the_signature(source):
    problems = source_problems(source)
    assert len(problems) == 1 and "empty" in problems[0] and SIGNATURE in problems[0]


def test_a_syntax_error_names_the_line():
    source = "def reward(prompts, completions, **columns):\n    x = 1\n    return [x for c in completions\n\nprint(1)\n"
    problems = source_problems(source)
    assert len(problems) == 1 and problems[0].startswith("line 3:") and "syntax error" in problems[0]


def test_an_indentation_error_names_the_line():
    problems = source_problems("def reward(prompts, completions, **columns):\nreturn []\n")
    assert problems[0].startswith("line 2:")


@pytest.mark.parametrize("source", [
    "def score(prompts, completions, **columns):\n    return []\n",
    "class reward:\n    pass\n",
    "reward = lambda prompts, completions, **columns: []\n",
    "def outer():\n    def reward(prompts, completions, **columns):\n        return []\n",
])
def test_a_missing_top_level_reward_function_is_named(source):
    problems = source_problems(source)
    assert len(problems) == 1 and "'reward'" in problems[0]


def test_an_async_reward_is_not_accepted():
    problems = source_problems("async def reward(prompts, completions, **columns):\n    return []\n")
    assert problems == ["line 1: reward must be a plain function (def), not async def"]


@pytest.mark.parametrize("signature,expected", [
    ("reward(completions, prompts, **columns)", ["(prompts, completions)"]),
    ("reward(prompts, **columns)", ["(prompts, completions)"]),
    ("reward(prompts, completions)", ["**columns"]),
    # Dataset columns arrive as keyword arguments, so naming one without a default is fine (as in TRL).
    ("reward(prompts, completions, answer, **columns)", []),
    ("reward(completions)", ["(prompts, completions)", "**columns"]),
    ("reward(prompts, completions, /, answer=None, *, k=1, **kw)", []),
    ("reward(prompts, completions, *args, **columns)", []),
])
def test_the_signature_is_checked(signature, expected):
    problems = source_problems(f"\n\ndef {signature}:\n    return []\n")
    assert len(problems) == len(expected)
    for problem, fragment in zip(problems, expected):
        assert problem.startswith("line 3:") and fragment in problem


def test_the_last_definition_wins_as_python_would():
    source = ("def reward(prompts, completions, **columns):\n    return []\n"
              "def reward(x):\n    return []\n")
    assert source_problems(source) and all(p.startswith("line 3:") for p in source_problems(source))


def test_a_null_byte_is_reported_without_a_bogus_line():
    problems = source_problems("def reward(prompts, completions, **columns):\n    return ['\x00']\n")
    assert problems and "line None" not in problems[0]


def test_very_deep_nesting_is_a_problem_not_a_crash():
    assert source_problems("x = " + "+".join(["1"] * 20000))
