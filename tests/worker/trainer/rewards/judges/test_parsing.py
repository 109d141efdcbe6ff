"""A judge's answer read as a number (score, choice, rank), and the constraint it is asked under."""
import pytest
import regex

from worker.trainer.rewards.judges import parsing
from worker.trainer.rewards.judges.catalog import JudgeParams
from worker.trainer.rewards.judges.parsing import UnreadableAnswer


def params(**overrides) -> JudgeParams:
    values = {"template": "{prompt} {completion}", "model": "judge"}
    if overrides.get("mode") == "rank":
        values["template"] = "{prompt} {completions}"
    if overrides.get("mode") == "choice":
        values["labels"] = {"Correct": 1.0, "Partly correct": 0.5, "Wrong": 0.0}
    return JudgeParams(**{**values, **overrides})


@pytest.mark.parametrize("raw, value", [("7", 0.7), ("10", 1.0), ("0", 0.0), ('{"score": 2.5}', 0.25),
                                        ("Score: 4/10", 0.4), ('```json\n{"score": 9}\n```', 0.9)])
def test_a_score_is_mapped_from_its_scale_to_0_1(raw, value):
    assert parsing.parse_score(raw, params()) == pytest.approx(value)


def test_a_score_on_a_negative_scale_is_mapped_from_its_ends():
    assert parsing.parse_score("-1", params(scale_min=-2, scale_max=2)) == pytest.approx(0.25)


@pytest.mark.parametrize("raw, reason", [("11", "outside the scale"), ("-1", "outside the scale"),
                                         ("great answer", "no number"), ("", "no number"),
                                         ('{"score": "high"}', "not a number")])
def test_a_score_off_the_scale_or_without_a_number_is_unreadable(raw, reason):
    with pytest.raises(UnreadableAnswer, match=reason):
        parsing.parse_score(raw, params())


@pytest.mark.parametrize("raw, value", [("Correct", 1.0), ("  correct\n", 1.0), ('"WRONG".', 0.0),
                                        ("partly   correct", 0.5), ('{"choice": "Partly correct"}', 0.5),
                                        ("The answer is wrong because 2+2=4.", 0.0)])
def test_a_choice_is_its_labels_value_whatever_its_case_and_spacing(raw, value):
    assert parsing.parse_choice(raw, params(mode="choice")) == value


@pytest.mark.parametrize("raw, reason", [("maybe", "none of the labels"), ("Correct or wrong?", "several labels")])
def test_a_choice_naming_no_label_or_several_is_unreadable(raw, reason):
    with pytest.raises(UnreadableAnswer, match=reason):
        parsing.parse_choice(raw, params(mode="choice"))


@pytest.mark.parametrize("raw", ['{"ranking": [3, 1, 2]}', "[3, 1, 2]", "3 > 1 > 2", "Best: 3, then 1, then 2"])
def test_a_ranking_pays_the_best_1_and_the_worst_0_linearly(raw):
    assert parsing.parse_rank(raw, 3) == [0.5, 0.0, 1.0]


def test_a_group_of_one_ranked_is_paid_in_full():
    assert parsing.parse_rank('{"ranking": [1]}', 1) == [1.0]


@pytest.mark.parametrize("raw", ['{"ranking": [1, 1, 2]}', '{"ranking": [1, 2]}', '{"ranking": [1, 2, 4]}',
                                 '{"ranking": ["a", 1, 2]}', '{"ranking": [1.5, 2, 3]}', "no idea"])
def test_a_ranking_that_is_not_an_order_of_the_group_is_unreadable(raw):
    with pytest.raises(UnreadableAnswer):
        parsing.parse_rank(raw, 3)


@pytest.mark.parametrize("scale, on, off", [
    ((0, 10), ["0", "10", "9.99", "0.5", "7"], ["10.5", "42", "11", "-1", "1.234"]),
    ((0, 9), ["0", "9", "8.75"], ["9.5", "10"]),
    ((-5, 5), ["-5", "-1", "0", "4.5", "5"], ["-6", "6", "5.5"]),
    ((0, 1000), ["0", "999.5", "1000"], ["10000", "1.234"]),  # too wide to list: digits only (the parser refuses 1001)
])
def test_a_constrained_score_is_a_number_on_the_scale(scale, on, off):
    pattern = regex.compile(parsing.score_regex(params(scale_min=scale[0], scale_max=scale[1])))
    assert [text for text in on if pattern.fullmatch(text)] == on
    assert [text for text in off if pattern.fullmatch(text)] == []


def test_vllm_is_asked_for_a_label_a_bounded_number_or_a_ranking_schema():
    assert parsing.constraint(params(mode="choice"), vllm=True) == {
        "structured_outputs": {"choice": ["Correct", "Partly correct", "Wrong"]}}
    assert set(parsing.constraint(params(), vllm=True)["structured_outputs"]) == {"regex"}
    ranking = parsing.constraint(params(mode="rank"), vllm=True, group_size=3)["structured_outputs"]["json"]
    assert ranking["required"] == ["ranking"]
    assert ranking["properties"]["ranking"] == {"enum": [[1, 2, 3], [1, 3, 2], [2, 1, 3], [2, 3, 1],
                                                         [3, 1, 2], [3, 2, 1]]}  # only orders of the group
    large = parsing.constraint(params(mode="rank"), vllm=True, group_size=8)["structured_outputs"]["json"]
    assert large["properties"]["ranking"] == {"type": "array", "items": {"enum": list(range(1, 9))},
                                              "minItems": 8, "maxItems": 8}


def test_other_endpoints_are_asked_for_a_json_schema_and_an_unconstrained_judge_for_nothing():
    asked = parsing.constraint(params(), vllm=False)["response_format"]
    assert asked["type"] == "json_schema"
    assert asked["json_schema"]["schema"]["properties"] == {"score": {"type": "number"}}
    assert parsing.constraint(params(constrained=False), vllm=True) == {}


def test_a_rank_judge_answers_in_enough_tokens_for_its_group():
    assert parsing.rank_answer_tokens(params(mode="rank"), 8) == 40
    assert parsing.rank_answer_tokens(params(mode="rank", max_answer_tokens=100), 8) == 100
