"""Which dataset columns a reward reads, and which a dataset lacks: refused when a run is created,
naming the reward and the column, rather than found by a worker minutes later.

A built-in names its column in its params (worker/trainer/rewards/catalog.py columns_read); a
judge in its template (judges/catalog.py judge_columns). Code says nothing, a reward model reads
none. The dataset's prompt column is not among the columns a reward receives (the worker passes
it as the prompt: worker/trainer/data/loading.py reward_columns), so naming it is refused too.
"""
from worker.trainer.for_control_plane.judges import judge_columns
from worker.trainer.for_control_plane.rewards import columns_read


class UnreadableParams(ValueError):
    """Stored params that no longer validate (saved before a check existed): the message names the reward."""


def reward_reads(reward) -> list[str]:
    """The dataset columns `reward` (a RewardFunction) reads."""
    try:
        if reward.kind == "builtin":
            return columns_read(reward.builtin, reward.params)
        if reward.kind == "judge":
            return judge_columns(reward.params)
    except ValueError as exc:  # pydantic's ValidationError is one
        raise UnreadableParams(f"reward {reward.name!r} has params that no longer validate: {exc}; "
                               "save it again") from None
    return []


def column_problems(dataset, rewards, where: str) -> list[str]:
    """One message per (reward, column) `dataset` cannot give; `where` names the dataset in words
    ("dataset 'x'"). A dataset whose columns are not known yet (a hub dataset is only loaded by a
    worker) is not checked."""
    if dataset is None or not dataset.columns:
        return []
    given = [column for column in dataset.columns if column != dataset.prompt_column]
    problems = []
    for reward in rewards:
        try:
            read = reward_reads(reward)
        except UnreadableParams as exc:
            problems.append(str(exc))
            continue
        for column in read:
            if column == dataset.prompt_column:
                problems.append(f"reward {reward.name!r} reads column {column!r}, which is the {where}'s prompt "
                                "column: a reward sees it as the prompt ({prompt} in a judge's template)")
            elif column not in given:
                problems.append(f"reward {reward.name!r} reads column {column!r}, which the {where} does not "
                                f"have (columns: {', '.join(dataset.columns)})")
    return problems
