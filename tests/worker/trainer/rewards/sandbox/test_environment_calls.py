"""Environment code in the sandbox: step and start are called with the conversation and the row,
TOOLS comes back from the load, and mistakes carry their kind and line as reward mistakes do."""
import pytest

from tests.support.sandbox import call, reward_source
from worker.trainer.rewards.sandbox import SandboxError

GUESS = '''
TOOLS = {"lookup": "Looks a word up", "calculate": {"description": "Does sums", "parameter": "expression"}}

def start(row):
    return [{"role": "user", "content": "Guess " + row["secret"][0] + "..."}]

def step(messages, row):
    said = messages[-1]["content"]
    print("heard", said)
    if said == row["secret"]:
        return None
    return "too low" if said < row["secret"] else {"role": "user", "content": "too high"}
'''
ROW = {"secret": "m", "prompt": "?"}


def conversation(*said):
    return [{"role": "user", "content": "Guess"}] + [{"role": "assistant", "content": text} for text in said]


def test_step_gets_the_conversation_and_the_row_and_its_answer_comes_back_as_given(pool):
    assert pool.env_step(GUESS, conversation("a"), ROW).reply == "too low"
    assert pool.env_step(GUESS, conversation("z"), ROW).reply == {"role": "user", "content": "too high"}
    done = pool.env_step(GUESS, conversation("a", "m"), ROW)
    assert done.reply is None and done.output == "heard m\n" and 0 < done.seconds < 10


def test_start_opens_the_episode_and_without_one_the_reply_is_none(pool):
    assert pool.env_start(GUESS, ROW).reply == [{"role": "user", "content": "Guess m..."}]
    assert pool.env_start("def step(messages, row):\n    return None\n", ROW).reply is None


def test_tools_come_back_from_the_load_one_dict_per_tool(pool):
    assert pool.env_tools(GUESS) == [
        {"name": "lookup", "description": "Looks a word up", "parameter": "input", "parameter_description": ""},
        {"name": "calculate", "description": "Does sums", "parameter": "expression", "parameter_description": ""},
    ]
    assert pool.env_tools("def step(messages, row):\n    return None\n") == []


def failure(pool, source: str, op: str = "step") -> SandboxError:
    with pytest.raises(SandboxError) as raised:
        if op == "step":
            pool.env_step(source, conversation("a"), ROW)
        else:
            pool.env_tools(source)
    assert pool.env_step(GUESS, conversation("m"), ROW).reply is None  # the pool carries on
    return raised.value


def test_an_exception_in_step_names_the_line_in_environment_py(pool):
    error = failure(pool, "def step(messages, row):\n    x = 1\n    return row['missing']\n")
    assert error.kind == "exception" and error.line == 3
    assert "KeyError: 'missing' (line 3)" in error.message
    assert 'File "environment.py", line 3, in step' in error.traceback


def test_a_syntax_error_names_its_line(pool):
    error = failure(pool, "def step(messages, row)\n    return None\n")
    assert error.kind == "syntax" and error.line == 1


def test_code_without_step_says_so(pool):
    error = failure(pool, "def reward(prompts, completions, **columns):\n    return []\n")
    assert error.kind == "definition" and "step(messages, row)" in error.message


@pytest.mark.parametrize("tools, says", [
    ("['calculate']", "dict"), ("{'not a name': 'x'}", "not a tool name"), ("{'f': 3}", "description"),
])
def test_bad_tools_are_refused_when_the_code_loads(pool, tools, says):
    error = failure(pool, f"TOOLS = {tools}\ndef step(messages, row):\n    return None\n", op="tools")
    assert error.kind == "definition" and says in error.message


def test_an_answer_that_is_not_json_is_refused(pool):
    error = failure(pool, "def step(messages, row):\n    return {1, 2}\n")
    assert error.kind == "reply_type" and "not JSON" in error.message


def test_a_step_stuck_in_a_loop_times_out(pool):
    error = failure(pool, "def step(messages, row):\n    while True:\n        pass\n")
    assert error.kind == "timeout"


def test_the_same_text_as_a_reward_and_an_environment_are_loaded_apart(pool):
    both = reward_source("return [2.0] * len(completions)") + "\ndef step(messages, row):\n    return 'again'\n"
    assert call(pool, both).values == [2.0, 2.0]
    assert pool.env_step(both, conversation("a"), ROW).reply == "again"
    assert call(pool, both).values == [2.0, 2.0]


def test_a_traceback_shows_the_lines_of_its_own_source_after_another_was_loaded(pool):
    first = "def step(messages, row):\n    return 1 / 0\n"
    failure(pool, first)
    pool.env_step("def step(messages, row):\n    return None\n", conversation("a"), ROW)
    error = failure(pool, first)
    assert "return 1 / 0" in error.traceback
