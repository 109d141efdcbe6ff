"""A tiny verifiers (0.1.x) environment, loaded by id "vf-tiny" with this folder on sys.path.

guess (the default): guess my number; a wrong guess is answered "higher" or "lower", the right
one ends the episode with a final "correct" the model never reads. Its rubric reads the answer,
the state the environment kept (hints given) and, as a group function, the whole group.
tools=True: a ToolEnv whose add(a, b) tool the model calls before it answers.
"""
import verifiers as vf
from datasets import Dataset


class GuessEnv(vf.MultiTurnEnv):
    async def setup_state(self, state):
        state["hints"] = 0
        return state

    async def env_response(self, messages, state, **kwargs):
        guess, target = messages[-1]["content"].strip(), int(state["answer"])
        if guess == str(target):
            state["final_env_response"] = [{"role": "user", "content": "correct"}]
            return state["final_env_response"]
        if guess == "boom":
            raise RuntimeError("the environment broke")
        state["hints"] += 1
        return [{"role": "user", "content": "higher" if guess.isdigit() and int(guess) < target else "lower"}]


def correct(completion, answer, **kwargs) -> float:
    last = [m for m in completion if m["role"] == "assistant"][-1]["content"].strip()
    return 1.0 if last == str(answer) else 0.0


async def hints(state) -> float:
    return float(state["hints"])


def solved_share(completions, answers) -> list[float]:
    """A group function: the share of the group that ended on the answer, for each."""
    share = sum(correct(c, a) for c, a in zip(completions, answers)) / len(completions)
    return [share] * len(completions)


def add(a: int, b: int) -> int:
    """Adds two integers.

    Args:
        a: The first integer.
        b: The second integer.
    """
    return a + b


def load_environment(size: int = 2, max_turns: int = 4, tools: bool = False):
    rows = Dataset.from_list([{"question": f"Guess my number ({i + 1}).", "answer": str(3 + i)} for i in range(size)])
    if tools:
        return vf.ToolEnv(dataset=rows, tools=[add], max_turns=max_turns, system_prompt="Use add, then answer.",
                          rubric=vf.Rubric(funcs=[correct]))
    return GuessEnv(dataset=rows, system_prompt="You play a guessing game.", max_turns=max_turns,
                    rubric=vf.Rubric(funcs=[correct, hints, solved_share], weights=[1.0, -0.1, 0.5]))
