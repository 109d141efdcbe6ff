"""Dataset specs to `datasets.Dataset`, and prompts to the text the model is given.

Local files and built-in generators work offline; a hub id goes through
`datasets.load_dataset` (real loading code, needs network access or a cache); a verifiers
environment's rows come from the environment, installed on the worker.
"""
from pathlib import Path

from worker.trainer.data.generators import generate
from worker.trainer.hub_ids import dataset_hub_id_problem
from worker.trainer.spec import DatasetSpec


class DatasetError(ValueError):
    """The dataset cannot be used as specified; the message says why."""


_FILE_BUILDERS = {"jsonl": "json", "csv": "csv", "parquet": "parquet"}


def load_dataset(spec: DatasetSpec, file: Path | None = None):
    """`file`: an uploaded dataset's file on this machine (data/fetch.py), by default spec.path."""
    import datasets

    if spec.kind == "file":
        path = Path(file or spec.path or "")
        if not path.is_file():
            raise DatasetError(f"dataset file {path} does not exist")
        fmt = spec.format or path.suffix.lstrip(".")
        builder = _FILE_BUILDERS.get(fmt)
        if builder is None:
            raise DatasetError(f"dataset file {path}: unknown format {fmt!r}")
        dataset = datasets.load_dataset(builder, data_files=str(path), split="train")
    elif spec.kind == "hub":
        dataset = datasets.load_dataset(checked_hub_id(spec.hub_id or ""), split=spec.split)
    elif spec.kind == "environment":
        from worker.trainer.environments.verifiers_env import verifiers_dataset

        dataset = verifiers_dataset(spec.verifiers_id or "", spec.params, spec.split)
    else:
        dataset = datasets.Dataset.from_list(generate(spec.generator or "", spec.params))
    return _checked(dataset, spec.prompt_column)


def checked_hub_id(hub_id: str) -> str:
    """The hub id, checked here again (a spec from an older control plane may name a local folder,
    which load_dataset would read); DatasetError otherwise."""
    if problem := dataset_hub_id_problem(hub_id):
        raise DatasetError(f"dataset hub_id refused: {problem}")
    return hub_id


def _checked(dataset, prompt_column: str):
    if prompt_column not in dataset.column_names:
        raise DatasetError(f"the dataset has no prompt column {prompt_column!r} "
                           f"(columns: {', '.join(dataset.column_names)})")
    if len(dataset) == 0:
        raise DatasetError("the dataset has no rows")
    return dataset


def render_prompt(prompt, tokenizer) -> str:
    """Plain text goes through the chat template as one user turn; chat messages as they are."""
    messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return "\n".join(m["content"] for m in messages)


def reward_columns(row: dict, prompt_column: str) -> dict:
    """Everything but the prompt is handed to reward functions as keyword arguments."""
    return {key: value for key, value in row.items() if key != prompt_column}
