"""An evaluation's summary: pass@1, pass@k by the unbiased estimator, means per reward function."""
import pytest

from worker.trainer.evaluation.outcomes import answer_records, pass_at_k, summary
from worker.trainer.rollout.groups import Completion, Group


def group(rewards: dict[str, list], totals: list[float], finish=("stop",)):
    count = len(totals)
    completions = [Completion(token_ids=[1, 2], logprobs=[0.0, 0.0], text=f"answer {i}",
                              finish_reason=finish[i % len(finish)]) for i in range(count)]
    return Group(prompt_index=0, prompt_text="q", prompt_ids=[1], columns={}, completions=completions,
                 model_version=3, rewards=rewards, totals=totals)


@pytest.mark.parametrize(("n", "c", "k", "expected"), [
    (4, 0, 4, 0.0), (4, 4, 1, 1.0), (4, 1, 1, 0.25), (4, 1, 4, 1.0), (4, 2, 2, 1 - 1 / 6), (10, 3, 5, 1 - 21 / 252),
])
def test_pass_at_k_is_the_chance_one_of_k_draws_is_right(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected)


def test_an_answer_passes_when_its_total_reaches_the_threshold():
    records = answer_records(group({"acc": [1.0, 0.0]}, [1.0, 0.0]), threshold=1.0)
    assert [r["passed"] for r in records] == [True, False]
    assert records[0]["rewards"] == {"acc": 1.0} and records[0]["num_tokens"] == 2


def test_an_answer_no_function_scored_has_no_total_and_does_not_pass():
    records = answer_records(group({"acc": [None]}, [0.0]), threshold=0.0)
    assert records[0]["total_reward"] is None and records[0]["passed"] is False


def test_summary_gives_pass_at_1_pass_at_k_and_each_functions_mean():
    groups = [group({"acc": [1.0, 0.0], "fmt": [1.0, 1.0]}, [2.0, 1.0], finish=("stop", "length")),
              group({"acc": [0.0, 0.0], "fmt": [0.0, 1.0]}, [0.0, 1.0])]
    answers = [answer_records(g, threshold=2.0) for g in groups]
    metrics = summary(groups, answers, k=2, seconds=1.5)
    assert metrics["eval/pass@1"] == pytest.approx(0.25)  # (1/2 + 0/2) / 2
    assert metrics["eval/pass@2"] == pytest.approx(0.5)   # the first example, either draw
    assert metrics["eval/reward/acc_mean"] == pytest.approx(0.25)
    assert metrics["eval/reward/fmt_mean"] == pytest.approx(0.75)
    assert metrics["eval/reward_mean"] == pytest.approx(1.0)
    assert metrics["eval/truncated"] == pytest.approx(0.25)
    assert metrics["eval/examples"] == 2


def test_greedy_evaluation_reports_no_pass_at_k():
    groups = [group({"acc": [1.0]}, [1.0])]
    assert not any(name.startswith("eval/pass@") and name != "eval/pass@1"
                   for name in summary(groups, [answer_records(groups[0], 1.0)], k=1, seconds=0.1))
