"""How a dataset appears in a run's launch spec: where a worker finds its rows."""
from typing import Any

from runs.datasets.models import Dataset


def dataset_spec(dataset: Dataset) -> dict[str, Any]:
    spec: dict[str, Any] = {"kind": {"upload": "file"}.get(dataset.source, dataset.source),
                            "prompt_column": dataset.prompt_column}
    if dataset.source == Dataset.Source.UPLOAD:
        # The path serves a worker sharing this disk; any other fetches the file (build_launch_spec).
        spec.update(path=dataset.file.path, format=dataset.file_format, sha256=dataset.sha256 or None,
                    size_bytes=dataset.size_bytes)
    elif dataset.source == Dataset.Source.HUB:
        spec.update(hub_id=dataset.hub_id, split=dataset.split or "train")
    elif dataset.source == Dataset.Source.ENVIRONMENT:
        spec.update(verifiers_id=dataset.hub_id, params=dataset.generator_params, split=dataset.split or "train")
    else:
        spec.update(generator=dataset.generator, params=dataset.generator_params)
    return spec
