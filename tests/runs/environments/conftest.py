"""An owner who may write code, with an arithmetic dataset, an accuracy reward and environments of each kind."""
import pytest

from runs.environments.models.environment import Environment, EnvironmentReward
from tests.support.reward_authors import grant_reward_authoring

GUESS = '''
TOOLS = {"hint": "A hint about the answer."}

def step(messages, row):
    last, answer = messages[-1], row["answer"].split("#### ")[-1]
    if last.get("tool_calls"):
        return [{"role": "tool", "content": "it is " + ("even" if int(answer) % 2 == 0 else "odd")}]
    print("heard", last["content"])
    if last["content"].strip().endswith(answer):
        return None
    return "no, try again"
'''


@pytest.fixture
def author(owner):
    return grant_reward_authoring(owner)


def made(owner, dataset, reward, **fields) -> Environment:
    environment = Environment.objects.create(owner=owner, dataset=dataset, **fields)
    EnvironmentReward.objects.create(environment=environment, reward_function=reward, weight=1.0)
    return environment


@pytest.fixture
def calculator(owner, dataset, reward):
    return made(owner, dataset, reward, name="calc", kind="builtin", builtin="calculator",
                params={"cost_per_call": 0.0, "max_result_chars": 200})


@pytest.fixture
def feedback(owner, dataset, reward):
    return made(owner, dataset, reward, name="feedback", kind="builtin", builtin="feedback",
                params={"turn_penalty": 0.0, "answer_column": "answer"})


@pytest.fixture
def guess(owner, dataset, reward):
    return made(owner, dataset, reward, name="guess", kind="code", source=GUESS)
