"""The worker's own check: a launch spec naming a local folder as its hub dataset (from an older
control plane, say) is refused before datasets.load_dataset reads anything."""
from unittest import mock

import pytest

from worker.trainer.data.loading import DatasetError, load_dataset
from worker.trainer.spec import DatasetSpec

pytest.importorskip("datasets")


@pytest.mark.parametrize("hub_id", ["/root/.cache/huggingface/datasets/gsm8k", "../other-run", "local-rows"])
def test_a_hub_spec_naming_a_local_path_is_refused_before_loading(hub_id, tmp_path, monkeypatch):
    rows = tmp_path / "local-rows"
    rows.mkdir()
    (rows / "data.jsonl").write_text('{"prompt": "secret"}\n')
    monkeypatch.chdir(tmp_path)
    with mock.patch("datasets.load_dataset") as load, pytest.raises(DatasetError, match="dataset hub_id refused"):
        load_dataset(DatasetSpec(kind="hub", hub_id=hub_id))
    load.assert_not_called()


def test_a_hub_id_is_handed_to_datasets(monkeypatch):
    import datasets

    rows = datasets.Dataset.from_list([{"prompt": "2+2?"}])
    with mock.patch("datasets.load_dataset", return_value=rows) as load:
        assert load_dataset(DatasetSpec(kind="hub", hub_id="openai/gsm8k", split="test"))[0]["prompt"] == "2+2?"
    load.assert_called_once_with("openai/gsm8k", split="test")
