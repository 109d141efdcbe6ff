"""The evaluation set: a seeded holdout that training never sees, the same examples every time."""
import datasets
import pytest

from worker.trainer.evaluation.eval_set import eval_examples, example_key, problem_of, split_holdout


class WordTokenizer:
    chat_template = None

    def __call__(self, text, add_special_tokens=False):
        return type("Encoded", (), {"input_ids": list(range(len(text.split())))})()


def rows(count):
    return datasets.Dataset.from_list([{"prompt": f"question {i}", "answer": str(i)} for i in range(count)])


def test_holdout_takes_the_share_asked_for_and_training_keeps_the_rest():
    kept, held = split_holdout(rows(100), 0.1, seed=7)
    assert len(held) == 10 and len(kept) == 90
    assert not set(kept["prompt"]) & set(held["prompt"])


def test_the_same_seed_holds_out_the_same_rows_and_another_seed_others():
    _, first = split_holdout(rows(100), 0.2, seed=7)
    _, again = split_holdout(rows(100), 0.2, seed=7)
    _, other = split_holdout(rows(100), 0.2, seed=8)
    assert first["prompt"] == again["prompt"]
    assert first["prompt"] != other["prompt"]


def test_a_tiny_share_still_holds_out_one_row_and_leaves_one_to_train():
    kept, held = split_holdout(rows(3), 0.01, seed=0)
    assert len(held) == 1 and len(kept) == 2
    kept, held = split_holdout(rows(2), 0.5, seed=0)
    assert len(held) == 1 and len(kept) == 1


def test_one_row_cannot_be_split():
    with pytest.raises(ValueError, match="at least 2 distinct problems"):
        split_holdout(rows(1), 0.5, seed=0)


def test_examples_are_the_first_n_with_their_columns_and_a_key_of_their_prompt():
    examples = eval_examples(rows(10), "prompt", 3, WordTokenizer(), max_prompt_length=512)
    assert [e.index for e in examples] == [0, 1, 2]
    assert examples[1].columns == {"answer": "1"}
    assert examples[1].key == example_key("question 1") and len(examples[1].key) == 16
    assert examples[0].key != examples[1].key


def test_fewer_rows_than_asked_gives_every_row():
    assert len(eval_examples(rows(2), "prompt", 64, WordTokenizer(), max_prompt_length=512)) == 2


# --------------------------------------------------------------------------- by problem
def demo_rows():
    """The arithmetic demo's dataset: problems repeat, each after a worked example of its own."""
    from runs.demos.definitions import DEMOS
    from worker.trainer.data.generators import generate

    params = DEMOS["arithmetic"].dataset["generator_params"]
    return datasets.Dataset.from_list(generate("arithmetic", params))


def asked(dataset):
    return [problem_of(prompt) for prompt in dataset["prompt"]]


def demo_overrides():
    from runs.demos.definitions import DEMOS

    return DEMOS["arithmetic"].config["overrides"]


def test_no_held_out_problem_of_the_demo_dataset_is_ever_trained_on():
    dataset = demo_rows()
    kept, held = split_holdout(dataset, demo_overrides()["eval_holdout_fraction"], seed=0)
    assert not set(asked(kept)) & set(asked(held))
    assert len(kept) + len(held) < len(dataset)  # the held-out problems' other rows left out too
    # each held-out problem once, and enough of them for what the demo evaluates
    assert len(set(asked(held))) == len(held) >= demo_overrides()["eval_examples"]


def test_the_same_seed_splits_the_demo_dataset_alike_on_resume():
    first_kept, first_held = split_holdout(demo_rows(), 0.12, seed=3)
    again_kept, again_held = split_holdout(demo_rows(), 0.12, seed=3)
    assert asked(first_held) == asked(again_held) and len(first_kept) == len(again_kept)


def test_rows_all_distinct_split_as_they_did_by_row():
    kept, held = split_holdout(rows(1000), 0.02, seed=5)
    assert len(held) == 20 and len(kept) == 980


def test_worked_examples_before_a_problem_do_not_make_it_another():
    same = [[{"role": "user", "content": example}, {"role": "assistant", "content": "#### 2"},
             {"role": "user", "content": "What is 3 + 4?"}] for example in ("What is 1 + 1?", "What is 2 + 0?")]
    assert problem_of(same[0]) == problem_of(same[1]) == problem_of([{"role": "user", "content": "What is 3 + 4?"}])
    assert problem_of("What is 3 + 4?") != problem_of("What is 4 + 3?")


def test_a_dataset_of_one_problem_cannot_be_split():
    with pytest.raises(ValueError, match="2 distinct problems"):
        split_holdout(datasets.Dataset.from_list([{"prompt": "same"}] * 5), 0.5, seed=0)
