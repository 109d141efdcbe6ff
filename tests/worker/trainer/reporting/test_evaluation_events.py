"""An evaluation travels in events of bounded size, whole examples each."""
from worker.trainer.reporting.session import answer_chunks


def example(answers):
    return {"index": 0, "answers": [{}] * answers}


def test_examples_are_cut_into_runs_of_at_most_so_many_answers():
    chunks = answer_chunks([example(4)] * 5, most=8)
    assert [[len(e["answers"]) for e in chunk] for chunk in chunks] == [[4, 4], [4, 4], [4]]


def test_an_example_with_more_answers_than_the_bound_travels_alone():
    chunks = answer_chunks([example(1), example(10), example(1)], most=8)
    assert [len(chunk) for chunk in chunks] == [1, 1, 1]


def test_no_examples_make_no_events():
    assert answer_chunks([], most=8) == []
