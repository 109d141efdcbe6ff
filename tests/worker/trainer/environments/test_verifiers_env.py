"""A verifiers environment named by id (tests/support/verifiers_envs/vf_tiny.py): its dataset, its
episodes played by the episode runner against a scripted policy, each with a state of its own,
and its rubric scored with the run's rewards; an id that cannot be loaded is refused saying why."""
import asyncio
import atexit
import signal
import threading
from pathlib import Path

import pytest

pytest.importorskip("verifiers")

from worker.trainer.environments.episodes import EpisodeLimits, EpisodeRunner, EpisodeSampler  # noqa: E402
from worker.trainer.environments.loading import (  # noqa: E402
    EnvironmentSetupError, extra_reward_functions, load_environment,
)
from worker.trainer.environments.rendering import ChatRendering  # noqa: E402
from worker.trainer.environments import verifiers_env  # noqa: E402
from worker.trainer.rollout.groups import Completion, Group  # noqa: E402
from worker.trainer.rollout.scoring import Scorer  # noqa: E402
from worker.trainer.spec import DatasetSpec, EnvironmentSpec  # noqa: E402

ENVIRONMENTS = Path(__file__).resolve().parents[3] / "support" / "verifiers_envs"


@pytest.fixture(autouse=True)
def vf_tiny_on_the_path(monkeypatch):
    monkeypatch.syspath_prepend(str(ENVIRONMENTS))


@pytest.fixture(scope="module")
def tokenizer(tiny_model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model_dir)


def spec(**params) -> EnvironmentSpec:
    return EnvironmentSpec(name="tiny", kind="verifiers", verifiers_id="vf-tiny", params=params)


@pytest.fixture
def opened():
    environments = []

    def open_(**params):
        environments.append(load_environment(spec(**params), "text"))
        return environments[-1]
    yield open_
    for environment in environments:
        environment.close()


class Policy:
    """Answers each turn with reply(turn), turn counted from 1 in the episode's own context, so that
    episodes played at once stay apart; ends each turn as a model that stops does."""

    def __init__(self, tokenizer, reply=str):
        self.tokenizer, self.reply = tokenizer, reply

    async def sample(self, prompt_ids, n, columns=None, overrides=None):
        turn = self.tokenizer.decode(prompt_ids).count("<|im_start|>assistant")
        text = self.reply(turn)
        ids = self.tokenizer(text, add_special_tokens=False).input_ids + [
            self.tokenizer.convert_tokens_to_ids("<|im_end|>")]
        return [Completion(token_ids=ids, logprobs=[-0.5] * len(ids), text=text, finish_reason="stop")]


def runner_for(tokenizer, environment, fmt="text", **changes) -> EpisodeRunner:
    limits = EpisodeLimits(**{**dict(max_turns=6, max_tool_calls=4, max_turn_tokens=32, max_episode_tokens=512,
                                     max_context=4096, timeout_s=10.0), **changes})
    return EpisodeRunner(environment, ChatRendering(tokenizer), limits, fmt, current_version=lambda: 1)


def play(tokenizer, environment, row, policy=None, episodes=1, **changes) -> list[Completion]:
    """`episodes` of `row` at once, as the rollout worker samples a group."""
    rendering = ChatRendering(tokenizer)
    messages = environment.start(row, row["prompt"])
    sampler = EpisodeSampler(policy or Policy(tokenizer), runner_for(tokenizer, environment, **changes))
    return asyncio.run(sampler.sample(rendering.ids(rendering.text(messages, True)), episodes,
                                      columns={**row, "prompt": messages}))


def scored(environment, row, completions) -> dict:
    errors = []
    group = Group(prompt_index=0, prompt_text="", prompt_ids=[], columns={**row}, completions=completions,
                  model_version=1)
    Scorer(extra_reward_functions(environment), on_error=lambda *error: errors.append(error)).score(group)
    assert not errors
    return group.rewards


def test_the_dataset_comes_from_the_environment_with_its_system_prompt():
    rows = verifiers_env.verifiers_dataset("vf-tiny", {"size": 3})
    assert len(rows) == 3 and {"prompt", "answer", "example_id", "task"} <= set(rows.column_names)
    assert rows[1]["prompt"] == [{"role": "system", "content": "You play a guessing game."},
                                 {"role": "user", "content": "Guess my number (2)."}]
    assert rows[1]["answer"] == "4"


def test_a_launch_spec_dataset_of_kind_environment_loads_those_rows():
    from worker.trainer.data.loading import load_dataset

    rows = load_dataset(DatasetSpec(kind="environment", verifiers_id="vf-tiny", params={"size": 5}))
    assert len(rows) == 5 and rows[0]["answer"] == "3"


def test_each_episode_of_a_group_keeps_its_own_state_and_the_rubric_scores_them(tokenizer, opened):
    environment = opened(size=3)
    row = dict(environment.env.get_dataset()[0])  # the answer is 3: guesses 1 and 2 get hints
    completions = play(tokenizer, environment, row, episodes=3)
    for completion in completions:
        episode = completion.episode
        assert episode.end_reason == "done" and episode.assistant_turns == 3 and not episode.failed
        said = [(t["role"], t["content"]) for t in episode.turns[2:]]
        assert said == [("assistant", "1"), ("user", "higher"), ("assistant", "2"), ("user", "higher"),
                        ("assistant", "3")]  # the final "correct" is the rubric's, not the model's
        assert episode.environment_state["hints"] == 2  # its own: a shared state would count 6
        assert episode.environment_state["completion"][-1] == {"role": "user", "content": "correct"}
    rewards = scored(environment, row, completions)
    assert rewards == {"correct": [1.0] * 3, "hints": [2.0] * 3, "solved_share": [1.0] * 3, "num_turns": [3.0] * 3}
    weights = {f.name: f.weight for f in extra_reward_functions(environment)}
    assert weights == {"correct": 1.0, "hints": -0.1, "solved_share": 0.5, "num_turns": 0.0}


def test_the_environments_own_turn_limit_and_the_runners_both_end_an_episode(tokenizer, opened):
    environment = opened(size=3, max_turns=3)
    row = dict(environment.env.get_dataset()[2])  # the answer is 5
    by_environment, = play(tokenizer, environment, row)
    assert by_environment.episode.end_reason == "done" and by_environment.episode.assistant_turns == 3
    assert by_environment.episode.environment_state["stop_condition"] == "max_turns_reached"
    by_runner, = play(tokenizer, environment, row, max_turns=2)
    assert by_runner.episode.end_reason == "max_turns"
    assert by_runner.episode.environment_state["stop_condition"] == "max_turns"
    rewards = scored(environment, row, [by_environment, by_runner])
    assert rewards["correct"] == [0.0, 0.0] and rewards["num_turns"] == [3.0, 2.0]


def test_a_toolenv_offers_its_tools_and_answers_their_calls(tokenizer, opened):
    environment = opened(size=3, tools=True)
    assert [tool.name for tool in environment.tools] == ["add"]
    assert environment.tools[0].as_schema()["function"]["parameters"]["required"] == ["a", "b"]
    row = dict(environment.env.get_dataset()[2])  # the answer is 5
    policy = Policy(tokenizer, {1: '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>',
                                2: "5"}.get)
    completion, = play(tokenizer, environment, row, policy=policy, fmt="hermes")
    episode = completion.episode
    assert episode.end_reason == "done" and episode.tool_calls == 1 and episode.tool_errors == 0
    assert [(t["role"], t["content"]) for t in episode.turns[-2:]] == [("tool", "5"), ("assistant", "5")]
    rewards = scored(environment, row, [completion])
    assert rewards["correct"] == [1.0] and rewards["total_tool_calls"] == [1.0] and rewards["add_calls"] == [1.0]


def test_an_environment_that_raises_fails_its_episode_without_a_reward(tokenizer, opened):
    environment = opened(size=1)
    row = dict(environment.env.get_dataset()[0])
    completion, = play(tokenizer, environment, row, policy=Policy(tokenizer, lambda turn: "boom"))
    assert completion.episode.end_reason == "environment_error" and completion.episode.failed
    assert "the environment broke" in completion.episode.turns[-1]["error"]
    assert completion.episode.environment_state is None
    assert all(values == [None] for values in scored(environment, row, [completion]).values())


def test_an_id_that_is_not_installed_is_refused_naming_it_and_why():
    with pytest.raises(EnvironmentSetupError) as refused:
        load_environment(EnvironmentSpec(name="x", kind="verifiers", verifiers_id="vf-nowhere"), "text")
    assert "'vf-nowhere'" in str(refused.value) and "no module 'vf_nowhere'" in str(refused.value)


def test_without_the_package_the_worker_says_so(monkeypatch):
    monkeypatch.setattr("worker.trainer.environments.verifiers_check.installed", lambda module: False)
    with pytest.raises(EnvironmentSetupError, match="the verifiers package is not installed on this worker"):
        load_environment(spec(size=10), "text")


def test_arguments_it_does_not_take_are_refused_with_its_own_error():
    with pytest.raises(EnvironmentSetupError) as refused:
        load_environment(spec(sizes=2), "text")
    assert "verifiers environment 'vf-tiny' cannot be loaded: TypeError:" in str(refused.value)
    assert "sizes" in str(refused.value)


def test_loading_leaves_the_process_signal_handlers_and_exit_hooks_as_they_were(opened):
    opened(size=6)  # imports done: what they register once is not the environment's
    hooks = atexit._ncallbacks()

    def ours(number, frame):
        pass
    previous = signal.signal(signal.SIGTERM, ours)
    try:
        opened(size=7)
        assert signal.getsignal(signal.SIGTERM) is ours and atexit._ncallbacks() == hooks
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_an_environment_loads_off_the_main_thread_too():
    failures = []

    def load():
        try:
            load_environment(spec(size=8), "text").close()
        except Exception as exc:
            failures.append(exc)
    thread = threading.Thread(target=load)
    thread.start()
    thread.join(60)
    assert failures == []


def test_closing_forgets_the_environment_so_that_the_next_run_loads_it_afresh(opened):
    first = opened(size=9)
    again = verifiers_env.loaded("vf-tiny", {"size": 9})
    assert again is first.env  # the run's dataset and its environment are one
    first.close()
    assert verifiers_env.loaded("vf-tiny", {"size": 9}) is not first.env
    verifiers_env._forget("vf-tiny", {"size": 9})


@pytest.mark.parametrize("environment", [None, {"name": "calc", "kind": "builtin", "builtin": "calculator"}])
def test_a_launch_spec_leaves_out_rewards_only_for_a_verifiers_environments_rubric(tmp_path, environment):
    from pydantic import ValidationError

    from worker.trainer.config import TrainingConfig
    from worker.trainer.spec import LaunchSpec

    launch = {"run_id": 1, "model": "m", "output_dir": str(tmp_path), "rewards": [],
              "dataset": {"kind": "environment", "verifiers_id": "vf-tiny"}, "config": TrainingConfig().model_dump()}
    assert LaunchSpec.model_validate({**launch, "environment": spec().model_dump()}).rewards == []
    with pytest.raises(ValidationError, match="at least one reward function, unless the environment is a verifiers"):
        LaunchSpec.model_validate({**launch, "environment": environment})
