"""A user's environment in the sandbox: its first messages, its replies turn by turn, and code
that does not load failing the run at start with the line to fix."""
import asyncio

import pytest

from tests.support.episodes import ScriptedServer, limits
from worker.trainer.environments.code import CodeEnvironment
from worker.trainer.environments.episodes import EpisodeRunner
from worker.trainer.environments.setup_error import EnvironmentSetupError
from worker.trainer.environments.rendering import ChatRendering
from worker.trainer.rewards.sandbox import SandboxPool

GUESS = '''
TOOLS = {"hint": "A hint about the answer."}

def start(row):
    return [{"role": "user", "content": f"Guess my number between 1 and {row['top']}."}]

def step(messages, row):
    said = messages[-1]["content"]
    if messages[-1].get("tool_calls"):
        return [{"role": "tool", "content": "it is odd"}]
    if said.strip() == str(row["answer"]):
        return None
    return "no, try again"
'''


@pytest.fixture(scope="module")
def sandbox():
    with SandboxPool(size=1) as pool:
        yield pool


@pytest.fixture(scope="module")
def tokenizer(tiny_model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model_dir)


def test_a_code_environment_opens_the_episode_and_answers_each_turn(sandbox, tokenizer):
    environment = CodeEnvironment.loaded(sandbox, GUESS, "guess")
    assert [tool.name for tool in environment.tools] == ["hint"]
    row = {"top": 9, "answer": 7, "prompt": "ignored"}
    messages = environment.start(row, "ignored")
    assert messages == [{"role": "user", "content": "Guess my number between 1 and 9."}]
    rendering = ChatRendering(tokenizer)
    runner = EpisodeRunner(environment, rendering, limits(), "text", current_version=lambda: 0)
    server = ScriptedServer(tokenizer, ["3", "<hint>x</hint>", "7"])
    completion = asyncio.run(runner.play(server, rendering.ids(rendering.text(messages, True)), messages, row))
    said = [(t["role"], t["content"]) for t in completion.episode.turns[1:]]
    assert said == [("assistant", "3"), ("user", "no, try again"), ("assistant", "<hint>x</hint>"),
                    ("tool", "it is odd"), ("assistant", "7")]
    assert completion.episode.end_reason == "done" and completion.episode.tool_calls == 1


def test_code_that_fails_to_load_names_its_line(sandbox):
    with pytest.raises(EnvironmentSetupError, match=r"does not load \(line 3\).*ZeroDivisionError"):
        CodeEnvironment.loaded(sandbox, "def step(messages, row):\n    return None\nX = 1 / 0\n", "broken")


def test_code_without_step_is_refused_before_it_runs(sandbox):
    with pytest.raises(EnvironmentSetupError, match="no top-level function named 'step'"):
        CodeEnvironment.loaded(sandbox, "def reward(prompts, completions):\n    return []\n", "not an env")
