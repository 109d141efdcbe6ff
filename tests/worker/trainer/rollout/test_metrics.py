"""Step metrics of episodes: turns, tool calls, tool errors, clean tool use, why episodes ended;
an episode without a reward is left out of the reward's mean."""
import math

import pytest

from worker.trainer.rollout.groups import Completion, EpisodeRecord, Group
from worker.trainer.rollout.metrics import episode_metrics, rollout_metrics, sample_records


def episode(calls=0, errors=0, turns=1, end="done", failed=False, tokens=4):
    return Completion(token_ids=[1] * tokens, logprobs=[0.0] * tokens, text="#### 1", finish_reason="stop",
                      loss_mask=[1] * tokens,
                      episode=EpisodeRecord(turns=[{"role": "assistant"}], end_reason=end, tool_calls=calls,
                                            tool_errors=errors, assistant_turns=turns, failed=failed))


def group(completions, totals):
    return Group(prompt_index=0, prompt_text="q", prompt_ids=[1], columns={}, completions=completions,
                 model_version=0, rewards={"acc": [None if math.isnan(t) else t for t in totals]}, totals=totals)


def test_episode_metrics_count_turns_calls_errors_and_endings():
    groups = [group([episode(calls=2, errors=1, turns=3), episode(calls=1, turns=2, end="max_turns"),
                     episode(turns=1), episode(end="environment_error", failed=True, tokens=8)],
                    [1.0, 0.0, 1.0, math.nan])]
    metrics = episode_metrics(groups)
    assert metrics["episode/turns_mean"] == pytest.approx(7 / 4)
    assert metrics["episode/tool_calls_mean"] == pytest.approx(3 / 4)
    assert metrics["episode/tool_error_rate"] == pytest.approx(1 / 3)
    assert metrics["episode/clean_tool_use"] == pytest.approx(1 / 4)  # the second: called, no error
    assert metrics["episode/tokens_mean"] == pytest.approx(5.0)
    assert (metrics["episode/end/done"], metrics["episode/end/max_turns"],
            metrics["episode/end/environment_error"]) == (0.5, 0.25, 0.25)


def test_one_shot_completions_report_no_episode_metrics():
    one_shot = Completion(token_ids=[1], logprobs=[0.0], text="x", finish_reason="stop")
    assert episode_metrics([group([one_shot, one_shot], [1.0, 0.0])]) == {}


def test_an_episode_without_reward_is_left_out_of_the_reward_mean_and_logged_without_one():
    groups = [group([episode(), episode(failed=True, end="environment_timeout")], [1.0, math.nan])]
    assert rollout_metrics(groups)["rollout/reward_mean"] == 1.0
    records = sample_records(groups, [0.0, 0.0], kept=[0], current_version=0)
    assert records[1]["total_reward"] is None and records[1]["end_reason"] == "environment_timeout"
