"""A step's kept samples travel in events of bounded size, whole groups each."""
from worker.trainer.events import SamplesEvent
from worker.trainer.reporting.session import SAMPLES_PER_EVENT, sample_chunks


def records(groups: int, size: int) -> list[dict]:
    return [{"group": group, "prompt": "q", "completion": "a"} for group in range(groups) for _ in range(size)]


def test_records_are_cut_between_groups_into_runs_of_at_most_so_many():
    chunks = sample_chunks(records(5, 4), most=8)
    assert [[r["group"] for r in chunk] for chunk in chunks] == [[0] * 4 + [1] * 4, [2] * 4 + [3] * 4, [4] * 4]


def test_a_group_larger_than_the_bound_travels_alone():
    chunks = sample_chunks(records(1, 2) + [{**r, "group": 1} for r in records(1, 10)], most=8)
    assert [len(chunk) for chunk in chunks] == [2, 10]


def test_a_step_of_thousands_of_completions_makes_events_the_ingest_accepts():
    chunks = sample_chunks(records(500, 8), most=SAMPLES_PER_EVENT)
    assert sum(len(chunk) for chunk in chunks) == 4000
    for chunk in chunks:
        SamplesEvent.model_validate({"type": "samples", "seq": 1, "step": 3, "samples": chunk})


def test_no_records_make_no_events():
    assert sample_chunks([], most=8) == []
