"""The run's evaluation rows held out of a dataset whose prompts are in a column of another name."""
from types import SimpleNamespace

import pytest

datasets = pytest.importorskip("datasets")

from worker.trainer.startup import datasets as startup_datasets  # noqa: E402


def test_a_holdout_reads_problems_from_the_datasets_own_prompt_column(monkeypatch):
    questions = [f"What is {n} + {n}?" for n in range(20)] * 2  # 20 problems, each twice
    rows = datasets.Dataset.from_dict({"question": questions, "answer": [str(2 * n) for n in range(20)] * 2})
    monkeypatch.setattr(startup_datasets, "_load", lambda run, spec: rows)
    said: list[str] = []
    run = SimpleNamespace(
        spec=SimpleNamespace(dataset=SimpleNamespace(prompt_column="question"), eval_dataset=None),
        config=SimpleNamespace(evaluates=True, eval_holdout_fraction=0.25, seed=3),
        report=SimpleNamespace(log=said.append))

    kept, held_out = startup_datasets.load_datasets(run)

    assert len(held_out) == 5 and len(set(held_out["question"])) == 5
    assert not set(held_out["question"]) & set(kept["question"])
    assert said == ["evaluation holds out 5 distinct problems (10 of the dataset's 40 rows); "
                    "training uses the other 30"]
