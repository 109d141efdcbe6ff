"""Environment code is read before it is saved: it must parse and define step(messages, row); start
and TOOLS are optional and checked where they are written out."""
import pytest

from worker.trainer.environments.source_check import source_problems

STEP = "def step(messages, row):\n    return None\n"


@pytest.mark.parametrize("source", [
    STEP,
    "TOOLS = {'add': 'Adds'}\ndef start(row):\n    return None\n" + STEP,
    "def step(messages, row, extra=1):\n    return None\n",
    "def step(*args):\n    return None\n",
    "names = ['a']\nTOOLS = {name: 'x' for name in names}\n" + STEP,  # computed: checked when it loads
])
def test_acceptable_code_has_no_problems(source):
    assert source_problems(source) == []


@pytest.mark.parametrize("source, problem", [
    ("", "the code is empty; define def step(messages, row)"),
    ("x = 1\ndef step(messages, row)\n    pass\n", "line 2: syntax error"),
    ("def reward(prompts, completions, **columns):\n    return []\n", "no top-level function named 'step'"),
    ("def step(messages):\n    return None\n", "line 1: step is called as step(messages, row); its parameters are "
                                                "(messages)"),
    ("async def step(messages, row):\n    return None\n", "line 1: step must be a plain function"),
    (STEP + "def start():\n    return None\n", "line 3: start is called as start(row)"),
    ("def step(messages, row, *, must):\n    return None\n", "line 1: step is called as step(messages, row)"),
    ("TOOLS = ['calc']\n" + STEP, "line 1: TOOLS is a dict of tool name → description"),
    ("TOOLS = {\n  'a b': 'x',\n}\n" + STEP, "line 2: TOOLS: 'a b' is not a tool name"),
])
def test_each_problem_points_at_its_line(source, problem):
    problems = source_problems(source)
    assert len(problems) == 1 and problems[0].startswith(problem), problems
