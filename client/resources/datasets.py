"""Datasets: an uploaded file, a Hub dataset or a generator's rows, and their preview."""
from pathlib import Path
from typing import Any

from client.session import Json, Session


class DatasetCalls(Session):
    def datasets(self, page: int = 1) -> Json:
        return self._call("GET", "datasets/", params={"page": page})

    def dataset(self, dataset_id: int) -> Json:
        """One dataset with its columns, row count, `preview` rows and check `state`."""
        return self._call("GET", f"datasets/{dataset_id}/")

    def upload_dataset(self, path: Path, name: str, prompt_column: str = "prompt") -> Json:
        with Path(path).open("rb") as handle:
            return self._call("POST", "datasets/", data={"name": name, "source": "upload",
                                                         "prompt_column": prompt_column},
                              files={"file": (Path(path).name, handle)}, timeout=None)

    def create_hub_dataset(self, name: str, hub_id: str, split: str = "train", prompt_column: str = "prompt") -> Json:
        """A Hugging Face Hub dataset, by id; the worker loads and checks it."""
        return self._call("POST", "datasets/", json={"name": name, "source": "hub", "hub_id": hub_id, "split": split,
                                                     "prompt_column": prompt_column})

    def create_generated_dataset(self, name: str, generator: str, params: dict[str, Any] | None = None,
                                 prompt_column: str = "prompt") -> Json:
        """Rows a built-in generator makes (arithmetic, ...), with its params."""
        return self._call("POST", "datasets/", json={"name": name, "source": "generator", "generator": generator,
                                                     "generator_params": params or {},
                                                     "prompt_column": prompt_column})

    def update_dataset(self, dataset_id: int, **fields: Any) -> Json:
        """Name or description; a dataset's source never changes (make a new one)."""
        return self._call("PATCH", f"datasets/{dataset_id}/", json=fields)

    def delete_dataset(self, dataset_id: int) -> None:
        self._call("DELETE", f"datasets/{dataset_id}/")
