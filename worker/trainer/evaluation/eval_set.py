"""The examples a run is evaluated on: another dataset, or rows held out of the training one.

A holdout is drawn from the run's seed, so a resumed run holds out (and never trains on) the
same rows. Examples keep their order, so "the first eval_examples" are the same at every
evaluation; each has a key, a hash of its prompt, that names it across runs.
"""
import hashlib
import random
from dataclasses import dataclass

from worker.trainer.data.loading import render_prompt, reward_columns
from worker.trainer.rollout.groups import task_prompt_text


@dataclass(frozen=True)
class EvalExample:
    index: int
    key: str
    prompt_text: str
    prompt_ids: list[int]
    columns: dict
    task_prompt: str | None = None  # the prompt as the dataset has it, which judges read (Group.task_prompt)


def example_key(prompt_text: str) -> str:
    return hashlib.sha256(prompt_text.encode()).hexdigest()[:16]


def split_holdout(dataset, fraction: float, seed: int):
    """(training rows, held-out rows): a seeded `fraction` of the rows, at least one, held out;
    at least one row is left to train on."""
    size = len(dataset)
    if size < 2:
        raise ValueError(f"eval_holdout_fraction needs at least 2 rows to split; the dataset has {size}")
    held = min(size - 1, max(1, round(size * fraction)))
    order = list(range(size))
    random.Random(f"holdout:{seed}").shuffle(order)
    held_out = sorted(order[:held])
    kept = sorted(order[held:])
    return dataset.select(kept), dataset.select(held_out)


def eval_examples(dataset, prompt_column: str, count: int, tokenizer, max_prompt_length: int,
                  environment=None, rendering=None) -> list[EvalExample]:
    """`environment`: a run on one is evaluated on episodes, whose first messages travel in the
    row's "prompt" (as in training: worker/trainer/startup/rollouts.py)."""
    examples = []
    for index in range(min(count, len(dataset))):
        row = dataset[index]
        columns = reward_columns(row, prompt_column)
        if environment is None:
            text = render_prompt(row[prompt_column], tokenizer)
        else:
            columns["prompt"] = environment.start(dict(row), row[prompt_column])
            text = rendering.text(columns["prompt"], generation_prompt=True)
        ids = tokenizer(text, add_special_tokens=False).input_ids[-max_prompt_length:]
        examples.append(EvalExample(index=index, key=example_key(text), prompt_text=text, prompt_ids=ids,
                                    columns=columns, task_prompt=task_prompt_text(row[prompt_column])))
    return examples
