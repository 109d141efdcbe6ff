"""An episode against a scripted server: turns, tool calls, the environment's replies tokenised
into the context and masked out of the loss, and every way an episode ends."""
import asyncio

import pytest

from tests.support.episodes import ScriptedServer, limits
from worker.trainer.environments.base import Environment, prompt_messages
from worker.trainer.environments.builtins import CalculatorEnvironment, FeedbackEnvironment
from worker.trainer.environments.catalog import CalculatorParams, FeedbackParams
from worker.trainer.environments.episodes import EpisodeRunner, EpisodeSampler
from worker.trainer.environments.rendering import ChatRendering


@pytest.fixture(scope="module")
def tokenizer(tiny_model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model_dir)


def play(tokenizer, environment, texts, row=None, **limit_changes):
    rendering = ChatRendering(tokenizer)
    runner = EpisodeRunner(environment, rendering, limits(**limit_changes), "text", current_version=lambda: 3)
    messages = environment.start(row or {}, "What is 2 + 3?")
    prompt_ids = rendering.ids(rendering.text(messages, generation_prompt=True))
    server = ScriptedServer(tokenizer, texts)
    completion = asyncio.run(runner.play(server, prompt_ids, messages, row or {"answer": "#### 5"}))
    return completion, server, prompt_ids


def test_a_calculator_call_gets_its_result_and_the_answer_ends_the_episode(tokenizer):
    calculator = CalculatorEnvironment(CalculatorParams(), "text")
    completion, server, prompt_ids = play(tokenizer, calculator, ["<calculate>2 + 3</calculate>", "#### 5"])
    episode = completion.episode
    assert episode.end_reason == "done" and episode.tool_calls == 1 and episode.tool_errors == 0
    roles = [(t["role"], t["trained"]) for t in episode.turns[-3:]]
    assert roles == [("assistant", True), ("tool", False), ("assistant", True)]
    assert episode.turns[-3]["tool_calls"] == [{"name": "calculate", "arguments": "2 + 3"}]
    assert episode.turns[-2]["content"] == "5" and episode.turns[-1]["model_version"] == 3
    assert completion.text == "#### 5"
    # The second turn continues the first one's context: the sampled tokens, then the tool's.
    first, second = server.requests
    assert first["stop"] == ["</calculate>"] and first["include_stop_str_in_output"]
    reply_ids = second["prompt"][len(prompt_ids) + episode.turns[-3]["num_tokens"]:]
    # The call stopped the turn before its end-of-turn token: the reply closes it first.
    assert tokenizer.decode(reply_ids) == "<|im_end|>\n<|im_start|>tool\n5<|im_end|>\n<|im_start|>assistant\n"
    # Sampled tokens are trained, the tool's reply is not; every token has a log-prob.
    before_second = len(second["prompt"]) - len(prompt_ids)
    assert completion.token_ids[:before_second] == second["prompt"][len(prompt_ids):]
    assert len(completion.loss_mask) == len(completion.token_ids) == len(completion.logprobs)
    assert sum(completion.loss_mask) == episode.turns[-3]["num_tokens"] + episode.turns[-1]["num_tokens"]
    assert completion.loss_mask[before_second - len(reply_ids):before_second] == [0] * len(reply_ids)


def test_a_bad_expression_gets_an_error_back_and_is_counted(tokenizer):
    calculator = CalculatorEnvironment(CalculatorParams(), "text")
    completion, _, _ = play(tokenizer, calculator, ["<calculate>import os</calculate>", "#### 5"])
    assert completion.episode.tool_errors == 1 and completion.episode.end_reason == "done"
    assert completion.episode.turns[-2]["content"].startswith("error: ")


def test_calls_past_the_limit_are_refused_with_an_error(tokenizer):
    calculator = CalculatorEnvironment(CalculatorParams(), "text")
    completion, _, _ = play(tokenizer, calculator, ["<calculate>1+1</calculate>", "<calculate>2+2</calculate>",
                                                    "#### 4"], max_tool_calls=1)
    tools = [t for t in completion.episode.turns if t["role"] == "tool"][1:]  # after the worked example's
    assert tools[0]["content"] == "2" and "max_tool_calls 1" in tools[1]["content"]
    assert completion.episode.tool_errors == 1


def test_an_episode_that_never_ends_stops_at_max_turns(tokenizer):
    feedback = FeedbackEnvironment(FeedbackParams())
    completion, server, _ = play(tokenizer, feedback, ["#### 9", "#### 1", "#### 7"], max_turns=3)
    assert completion.episode.end_reason == "max_turns" and completion.episode.assistant_turns == 3
    replies = [t["content"] for t in completion.episode.turns if t["role"] == "user"][1:]
    assert replies == ["Too high. Try again.", "Too low. Try again.", "Too high. Try again."]


def test_feedback_ends_the_episode_at_the_right_answer(tokenizer):
    completion, _, _ = play(tokenizer, FeedbackEnvironment(FeedbackParams()), ["no idea", "#### 2.5", "#### 5"])
    replies = [t["content"] for t in completion.episode.turns if t["role"] == "user"][1:]
    assert replies == ["I found no answer. Try again, and end with #### <number>.",
                       "That is not an integer. Try again."]
    assert completion.episode.end_reason == "done" and completion.episode.assistant_turns == 3


def test_the_episode_token_budget_ends_an_episode(tokenizer):
    feedback = FeedbackEnvironment(FeedbackParams())
    completion, server, _ = play(tokenizer, feedback, ["#### 9", "#### 8"], max_episode_tokens=6)
    assert completion.episode.end_reason == "max_tokens"
    assert server.requests[0]["max_tokens"] == 6


class Broken(Environment):
    def step(self, messages, row):
        raise RuntimeError("lost the answer key")


def test_an_environment_that_raises_ends_its_episode_without_a_reward_and_says_so(tokenizer):
    warnings = []
    rendering = ChatRendering(tokenizer)
    runner = EpisodeRunner(Broken(), rendering, limits(), "text", lambda: 0, on_warning=warnings.append)
    messages = prompt_messages("What is 2 + 3?")
    ids = rendering.ids(rendering.text(messages, True))
    completion = asyncio.run(runner.play(ScriptedServer(tokenizer, ["#### 5"]), ids, messages, {}))
    assert completion.episode.end_reason == "environment_error" and completion.episode.failed
    assert "lost the answer key" in completion.episode.turns[-1]["error"]
    assert warnings == ["an episode ended without a reward (environment_error, failure 1 of the run): "
                        "RuntimeError: lost the answer key"]


class Slow(Environment):
    def step(self, messages, row):
        import time

        time.sleep(1.0)


def test_an_environment_that_does_not_answer_in_time_ends_its_episode(tokenizer):
    completion, _, _ = play(tokenizer, Slow(), ["#### 5"], timeout_s=0.1)
    assert completion.episode.end_reason == "environment_timeout" and completion.episode.failed


def test_hermes_calls_that_are_not_json_get_an_error_message(tokenizer):
    rendering = ChatRendering(tokenizer)
    calculator = CalculatorEnvironment(CalculatorParams(), "hermes")
    runner = EpisodeRunner(calculator, rendering, limits(), "hermes", current_version=lambda: 0)
    messages = prompt_messages("What is 2 + 3?")
    server = ScriptedServer(tokenizer, ['<tool_call>{"name": "calculate", </tool_call>', "#### 5"])
    completion = asyncio.run(runner.play(server, rendering.ids(rendering.text(messages, True)), messages, {}))
    assert completion.episode.tool_errors == 1 and "not JSON" in completion.episode.turns[-2]["content"]
    assert server.requests[0]["stop"] == ["</tool_call>"]


def test_a_group_is_its_episodes_played_from_the_rows_first_messages(tokenizer):
    rendering = ChatRendering(tokenizer)
    runner = EpisodeRunner(FeedbackEnvironment(FeedbackParams()), rendering, limits(), "text", lambda: 0)
    server = ScriptedServer(tokenizer, ["#### 5", "#### 4", "#### 5"])
    messages = prompt_messages("What is 2 + 3?")
    group = asyncio.run(EpisodeSampler(server, runner).sample(
        rendering.ids(rendering.text(messages, True)), 2, columns={"prompt": messages, "answer": "#### 5"}))
    assert len(group) == 2 and sorted(c.episode.assistant_turns for c in group) == [1, 2]
