"""Scoring a group: weighted totals, None for not applicable, failures isolated to their function."""
import pytest

from worker.trainer.rollout.groups import Completion, Group
from worker.trainer.rollout.scoring import Explained, RewardFunction, Scorer


def group(texts=("a", "bb")):
    return Group(prompt_index=0, prompt_text="p", prompt_ids=[1], columns={"answer": "#### 1"},
                 completions=[Completion([1] * len(t), [-1.0] * len(t), t, "stop") for t in texts], model_version=0)


def scorer(*functions):
    errors = []
    return Scorer(list(functions), on_error=lambda name, message: errors.append((name, message))), errors


def test_totals_are_weighted_sums_skipping_none():
    s, errors = scorer(RewardFunction("len", 2.0, lambda p, c, **k: [float(len(x)) for x in c]),
                       RewardFunction("maybe", 1.0, lambda p, c, **k: [None, 10.0]))
    g = group()
    s.score(g)
    assert g.rewards == {"len": [1.0, 2.0], "maybe": [None, 10.0]}
    assert g.totals == [2.0, 14.0] and errors == []


def test_columns_and_token_counts_reach_the_function():
    seen = {}

    def spy(prompts, completions, **columns):
        seen.update(columns)
        return [0.0] * len(completions)

    s, _ = scorer(RewardFunction("spy", 1.0, spy))
    s.score(group())
    assert seen["answer"] == ["#### 1", "#### 1"] and seen["completion_lengths"] == [1, 2]


@pytest.mark.parametrize(("fn", "message"), [
    (lambda p, c, **k: 1 / 0, "ZeroDivisionError"),
    (lambda p, c, **k: [1.0], "returned 1 values for 2 completions"),
    (lambda p, c, **k: [float("nan"), 1.0], "finite number"),
    (lambda p, c, **k: ["high", 1.0], "'high'"),
    (lambda p, c, **k: 3.0, "expected a list"),
])
def test_a_failing_function_gives_none_and_the_others_still_count(fn, message):
    s, errors = scorer(RewardFunction("bad", 1.0, fn), RewardFunction("ok", 1.0, lambda p, c, **k: [1.0, 1.0]))
    g = group()
    s.score(g)
    assert g.rewards["bad"] == [None, None] and g.totals == [1.0, 1.0]
    assert errors[0][0] == "bad" and message in errors[0][1]


def test_judges_read_the_task_prompt_and_code_rewards_the_rendered_one():
    seen = {}

    def judge(prompts, completions, task_prompts, **columns):
        seen["judge"] = (prompts, task_prompts)
        return [1.0] * len(completions)

    def code(prompts, completions, **columns):
        seen["code"] = (prompts, "task_prompts" in columns)
        return [0.0] * len(completions)

    s, errors = scorer(RewardFunction("judge", 1.0, judge, reads_task_prompts=True), RewardFunction("code", 1.0, code))
    g = group()
    g.task_prompt = "What is 1 + 0?"
    s.score(g)
    assert seen["judge"] == (["p", "p"], ["What is 1 + 0?", "What is 1 + 0?"])
    assert seen["code"] == (["p", "p"], False) and errors == []


def test_without_a_task_prompt_a_judge_reads_the_prompt_text():
    seen = []
    s, _ = scorer(RewardFunction("judge", 1.0, lambda p, c, task_prompts, **k: seen.append(task_prompts) or [1.0, 1.0],
                                 reads_task_prompts=True))
    s.score(group())
    assert seen == [["p", "p"]]


def test_a_judges_explanations_are_kept_beside_its_rewards():
    s, _ = scorer(RewardFunction("judge", 1.0, lambda p, c, **k: Explained([1.0, None], ["yes", "maybe?"])))
    g = group()
    s.score(g)
    assert g.rewards == {"judge": [1.0, None]} and g.explanations == {"judge": ["yes", "maybe?"]}
