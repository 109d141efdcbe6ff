"""Built-in rewards on real GSM8K answers: correct answers score 1, perturbed ones 0."""
import json
from pathlib import Path

import pytest

pytest.importorskip("math_verify")

from worker.trainer.rewards.builtins import build_builtin  # noqa: E402

GSM8K = Path(__file__).resolve().parents[5] / "shared" / "datasets" / "gsm8k" / "test.jsonl"


@pytest.fixture(scope="module")
def gsm8k_rows():
    if not GSM8K.exists():
        pytest.skip(f"GSM8K not found at {GSM8K}")
    with GSM8K.open() as lines:
        return [json.loads(line) for _, line in zip(range(60), lines)]


def final_number(answer: str) -> str:
    return answer.rsplit("####", 1)[1].strip().replace(",", "")


def perturbed(answer: str) -> str:
    body, number = answer.rsplit("####", 1)
    return f"{body}#### {float(number.strip().replace(',', '')) + 1:g}"


def score(name, completions, params=None, **columns):
    return build_builtin(name, params or {})(["q"] * len(completions), completions, **columns)


def test_accuracy_scores_gsm8k_reference_solutions_as_correct(gsm8k_rows):
    answers = [row["answer"] for row in gsm8k_rows]
    assert score("accuracy", answers, answer=answers) == [1.0] * len(answers)


def test_accuracy_scores_perturbed_answers_as_wrong(gsm8k_rows):
    answers = [row["answer"] for row in gsm8k_rows]
    assert score("accuracy", [perturbed(a) for a in answers], answer=answers) == [0.0] * len(answers)


def test_accuracy_understands_boxed_answers(gsm8k_rows):
    answers = [row["answer"] for row in gsm8k_rows[:10]]
    boxed = [f"So the result is $\\boxed{{{final_number(a)}}}$." for a in answers]
    assert score("accuracy", boxed, answer=answers) == [1.0] * 10


def test_accuracy_falls_back_to_the_last_number_and_ignores_thousands_separators():
    assert score("accuracy", ["first 3 then 1,250"], answer=["#### 1250"]) == [1.0]


def test_accuracy_is_not_applicable_without_a_reference():
    assert score("accuracy", ["#### 3"], answer=["no number here"]) == [None]


def test_accuracy_names_a_missing_column():
    with pytest.raises(KeyError, match="no column 'answer'"):
        score("accuracy", ["#### 3"], solution=["#### 3"])


def test_format_default_requires_a_final_hash_answer():
    assert score("format", ["work\n#### 42", "work, 42", "#### 42 and more text"]) == [1.0, 0.0, 0.0]


def test_format_tags_with_partial_credit():
    params = {"regex": None, "tags": ["think", "answer"], "partial_credit": True}
    completions = ["<think>a</think><answer>b</answer>", "<think>a</think>", "none"]
    assert score("format", completions, params) == [1.0, 0.5, 0.0]


def test_format_tags_all_or_nothing():
    params = {"regex": None, "tags": ["think", "answer"]}
    assert score("format", ["<think>a</think>"], params) == [0.0]


def test_length_rewards_the_target_range_and_softly_penalizes_overlong():
    params = {"min_tokens": 10, "max_tokens": 20, "soft_penalty_tokens": 10}
    assert score("length", ["x"] * 4, params, completion_lengths=[5, 15, 25, 40]) == [0.5, 1.0, 0.5, 0.0]


def test_exact_match_ignores_case_and_whitespace_by_default():
    assert score("exact_match", [" Paris ", "London"], {"column": "city"}, city=["paris", "paris"]) == [1.0, 0.0]


def test_repetition_penalizes_repeated_ngrams():
    fresh, looping = score("repetition", ["a b c d e f", "a b c a b c a b c"], {"ngram": 3, "max_penalty": -1.0})
    assert fresh == 0.0
    assert looping == pytest.approx(-(1 - 3 / 7))


def final_answer_line(answer: str) -> str:
    return "#### " + final_number(answer)


def test_exact_match_accepts_the_gsm8k_final_answer_and_refuses_a_perturbed_one(gsm8k_rows):
    finals = [final_answer_line(row["answer"]) for row in gsm8k_rows]
    wrong = [perturbed(final) for final in finals]
    assert score("exact_match", [f"  {f}\n" for f in finals], {"column": "final"}, final=finals) == [1.0] * len(finals)
    assert score("exact_match", wrong, {"column": "final"}, final=finals) == [0.0] * len(finals)


def test_format_accepts_gsm8k_solutions_and_refuses_them_without_the_final_line(gsm8k_rows):
    answers = [row["answer"] for row in gsm8k_rows]
    assert score("format", answers) == [1.0] * len(answers)
    without_final = [a.rsplit("####", 1)[0] + "The answer is " + final_number(a) for a in answers]
    assert score("format", without_final) == [0.0] * len(answers)


def test_length_scores_gsm8k_solutions_inside_the_range_and_padded_ones_outside(gsm8k_rows):
    answers = [row["answer"] for row in gsm8k_rows]
    longest = max(len(a.split()) for a in answers)
    params = {"min_tokens": 1, "max_tokens": longest, "soft_penalty_tokens": 10}
    assert score("length", answers, params) == [1.0] * len(answers)
    padded = [a + " filler" * (longest + 10) for a in answers]
    assert score("length", padded, params) == [0.0] * len(answers)


def test_repetition_leaves_gsm8k_solutions_nearly_alone_and_penalizes_looping_ones(gsm8k_rows):
    answers = [row["answer"] for row in gsm8k_rows]
    fresh = score("repetition", answers, {"ngram": 4, "max_penalty": -1.0})
    looping = score("repetition", [(a.split("\n")[0] + " ") * 6 for a in answers], {"ngram": 4, "max_penalty": -1.0})
    assert all(value > -0.2 for value in fresh)
    assert all(value < -0.6 for value in looping)
