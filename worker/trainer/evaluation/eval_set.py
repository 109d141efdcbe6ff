"""The examples a run is evaluated on: another dataset, or problems held out of the training one.

A holdout is drawn from the run's seed, so a resumed run holds out (and never trains on) the
same problems. It is drawn by problem, not by row: a generator repeats problems (two numbers up
to 10 make 200), and a row held out whose twin is trained on measures recall, not learning.
Examples keep their order, so "the first eval_examples" are the same at every evaluation; each
has a key, a hash of its prompt, that names it across runs.
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


def problem_of(prompt) -> str:
    """What a row asks: a prompt string, or a messages list's last user turn (worked examples
    before it do not make two rows different problems)."""
    if isinstance(prompt, list):
        asked = [m for m in prompt if isinstance(m, dict) and m.get("role", "user") == "user"]
        return task_prompt_text(asked[-1:]) if asked else task_prompt_text(prompt)
    return task_prompt_text(prompt)


def _rows_by_problem(dataset, prompt_column: str) -> list[list[int]]:
    """Row indices grouped by problem, the problems in the order they first appear."""
    groups: dict[str, list[int]] = {}
    for index, prompt in enumerate(dataset[prompt_column]):
        groups.setdefault(problem_of(prompt), []).append(index)
    return list(groups.values())


def split_holdout(dataset, fraction: float, seed: int, prompt_column: str = "prompt"):
    """(training rows, held-out rows): a seeded `fraction` of the distinct problems, at least one,
    held out, each once (its first row); every row of them is kept out of training, and at least
    one problem is left to train on. Rows all distinct: the split by row it always was."""
    problems = _rows_by_problem(dataset, prompt_column)
    if len(problems) < 2:
        raise ValueError(f"eval_holdout_fraction needs at least 2 distinct problems to split; the dataset's "
                         f"{len(dataset)} rows hold {len(problems)}")
    held = min(len(problems) - 1, max(1, round(len(problems) * fraction)))
    order = list(range(len(problems)))
    random.Random(f"holdout:{seed}").shuffle(order)
    held_out = sorted(problems[p][0] for p in order[:held])
    kept = sorted(index for p in order[held:] for index in problems[p])
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
