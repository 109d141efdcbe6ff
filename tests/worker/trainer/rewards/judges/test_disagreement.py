"""A judge measured against the verifiers of a run, per step: how often it differs, and how
often it pays for what a verifier refuses (the alarm judge_disagreement watches the latter)."""
import pytest

from worker.trainer.rewards.judges.disagreement import disagreement_metrics
from worker.trainer.rollout.groups import Completion, Group
from worker.trainer.rollout.scoring import RewardFunction

ACCURACY = RewardFunction("accuracy", 1.0, fn=None, verifier=True)
JUDGE = RewardFunction("tone", 1.0, fn=None, pass_threshold=0.5)
FORMAT = RewardFunction("format", 0.2, fn=None)


def group(**rewards) -> Group:
    count = len(next(iter(rewards.values())))
    completions = [Completion(token_ids=[1], logprobs=[0.0], text="x", finish_reason="stop")] * count
    return Group(prompt_index=0, prompt_text="p", prompt_ids=[1], columns={}, completions=completions,
                 model_version=0, rewards=dict(rewards))


def test_a_judge_paying_for_refused_completions_is_measured_against_the_verifier():
    groups = [group(accuracy=[1.0, 0.0, 0.0, 0.0], tone=[0.9, 0.8, 0.2, 0.5]),
              group(accuracy=[0.0, 1.0], tone=[0.1, 0.3])]
    metrics = disagreement_metrics(groups, [ACCURACY, JUDGE, FORMAT])
    # refused: 4 completions, paid for: 0.8 and 0.5 (at the threshold pays); differ: those 2 and the 0.3 pass
    assert metrics == {"judge/tone/pays_refused": 2 / 4, "judge/tone/disagreement": 3 / 6}


def test_completions_either_left_without_a_value_are_left_out():
    groups = [group(accuracy=[0.0, None, 0.0, 1.0], tone=[None, 1.0, 1.0, 1.0])]
    assert disagreement_metrics(groups, [ACCURACY, JUDGE]) == {"judge/tone/pays_refused": 1.0,
                                                                "judge/tone/disagreement": 0.5}


def test_pays_refused_is_absent_where_the_verifier_refused_nothing():
    groups = [group(accuracy=[1.0, 1.0], tone=[0.0, 1.0])]
    assert disagreement_metrics(groups, [ACCURACY, JUDGE]) == {"judge/tone/disagreement": 0.5}


def test_a_completion_any_verifier_refuses_is_refused():
    exact = RewardFunction("exact", 1.0, fn=None, verifier=True)
    groups = [group(accuracy=[1.0, 1.0, None], exact=[0.0, 1.0, 0.0], tone=[1.0, 1.0, 1.0])]
    assert disagreement_metrics(groups, [ACCURACY, exact, JUDGE]) == {"judge/tone/pays_refused": 1.0,
                                                                       "judge/tone/disagreement": 2 / 3}


def test_each_judge_has_its_own_metrics_and_its_own_threshold():
    strict = RewardFunction("strict", 1.0, fn=None, pass_threshold=0.95)
    groups = [group(accuracy=[0.0, 0.0], tone=[0.9, 0.9], strict=[0.9, 1.0])]
    metrics = disagreement_metrics(groups, [ACCURACY, JUDGE, strict])
    assert metrics["judge/tone/pays_refused"] == 1.0 and metrics["judge/strict/pays_refused"] == 0.5


@pytest.mark.parametrize("functions", [[JUDGE, FORMAT], [ACCURACY, FORMAT], []])
def test_nothing_without_both_a_judge_and_a_verifier(functions):
    assert disagreement_metrics([group(accuracy=[0.0], tone=[1.0], format=[1.0])], functions) == {}


def test_nothing_where_no_completion_has_both_values():
    assert disagreement_metrics([group(accuracy=[None, 1.0], tone=[1.0, None])], [ACCURACY, JUDGE]) == {}
    assert disagreement_metrics([], [ACCURACY, JUDGE]) == {}
