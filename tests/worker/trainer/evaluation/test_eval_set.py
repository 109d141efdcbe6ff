"""The evaluation set: a seeded holdout that training never sees, the same examples every time."""
import datasets
import pytest

from worker.trainer.evaluation.eval_set import eval_examples, example_key, split_holdout


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
    with pytest.raises(ValueError, match="at least 2 rows"):
        split_holdout(rows(1), 0.5, seed=0)


def test_examples_are_the_first_n_with_their_columns_and_a_key_of_their_prompt():
    examples = eval_examples(rows(10), "prompt", 3, WordTokenizer(), max_prompt_length=512)
    assert [e.index for e in examples] == [0, 1, 2]
    assert examples[1].columns == {"answer": "1"}
    assert examples[1].key == example_key("question 1") and len(examples[1].key) == 16
    assert examples[0].key != examples[1].key


def test_fewer_rows_than_asked_gives_every_row():
    assert len(eval_examples(rows(2), "prompt", 64, WordTokenizer(), max_prompt_length=512)) == 2
