"""Dataset specs to datasets, prompt rendering, and a data order that resumes exactly."""
import json
from pathlib import Path

import pytest

pytest.importorskip("datasets")

from worker.trainer.data.loading import DatasetError, load_dataset, render_prompt, reward_columns  # noqa: E402
from worker.trainer.data.order import PromptOrder  # noqa: E402
from worker.trainer.spec import DatasetSpec  # noqa: E402

GSM8K = Path(__file__).resolve().parents[4] / "shared" / "datasets" / "gsm8k" / "test.jsonl"


def test_gsm8k_file_loads_with_question_as_prompt():
    if not GSM8K.exists():
        pytest.skip("GSM8K not available")
    dataset = load_dataset(DatasetSpec(kind="file", path=str(GSM8K), format="jsonl", prompt_column="question"))
    assert len(dataset) == 1319 and "answer" in dataset.column_names


def test_csv_and_parquet_files_load(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / "d.csv").write_text("prompt,answer\nhi,#### 1\n")
    pq.write_table(pa.table({"prompt": ["a", "b"], "answer": ["1", "2"]}), tmp_path / "d.parquet")
    assert len(load_dataset(DatasetSpec(kind="file", path=str(tmp_path / "d.csv"), format="csv"))) == 1
    assert len(load_dataset(DatasetSpec(kind="file", path=str(tmp_path / "d.parquet"), format="parquet"))) == 2


def test_generator_dataset_needs_no_download():
    dataset = load_dataset(DatasetSpec(kind="generator", generator="arithmetic", params={"count": 12}))
    assert len(dataset) == 12 and dataset[0]["answer"].startswith("####")


def test_missing_prompt_column_is_a_clear_error(tmp_path):
    (tmp_path / "d.jsonl").write_text(json.dumps({"question": "q"}) + "\n")
    with pytest.raises(DatasetError, match="no prompt column 'prompt'.*question"):
        load_dataset(DatasetSpec(kind="file", path=str(tmp_path / "d.jsonl"), format="jsonl"))


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(DatasetError, match="does not exist"):
        load_dataset(DatasetSpec(kind="file", path=str(tmp_path / "nope.jsonl")))


class TemplateTokenizer:
    chat_template = "x"

    def apply_chat_template(self, messages, tokenize, add_generation_prompt):
        return "".join(f"<{m['role']}>{m['content']}" for m in messages) + "<assistant>"


def test_plain_prompt_becomes_one_user_turn():
    assert render_prompt("2+2?", TemplateTokenizer()) == "<user>2+2?<assistant>"


def test_chat_prompt_keeps_its_messages():
    chat = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    assert render_prompt(chat, TemplateTokenizer()) == "<system>be brief<user>hi<assistant>"


def test_other_columns_go_to_rewards():
    assert reward_columns({"prompt": "p", "answer": "#### 1", "id": 3}, "prompt") == {"answer": "#### 1", "id": 3}


def test_order_is_a_permutation_per_epoch():
    order = PromptOrder(size=5, seed=1)
    first_epoch = [order.next() for _ in range(5)]
    second_epoch = [order.next() for _ in range(5)]
    assert sorted(first_epoch) == sorted(second_epoch) == [0, 1, 2, 3, 4]
    assert order.epoch == 2


def test_order_resumed_from_a_position_continues_identically():
    full = PromptOrder(size=7, seed=3)
    sequence = [full.next() for _ in range(20)]
    resumed = PromptOrder(size=7, seed=3, position=9)
    assert [resumed.next() for _ in range(11)] == sequence[9:]


def test_frontier_waits_for_the_oldest_unfinished_prompt():
    from worker.trainer.data.order import ConsumedFrontier

    frontier = ConsumedFrontier(start=10)
    for position in (11, 13, 10):
        frontier.consume(position)
    assert frontier.frontier == 12
    frontier.consume(12)
    assert frontier.frontier == 14
