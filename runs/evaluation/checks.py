"""What a run's evaluation settings must satisfy before it is created: refused here, with the field
and the column named, rather than found out by a worker minutes later."""
from worker.trainer.rewards.catalog import columns_read


def evaluation_problems(run: dict) -> dict[str, list[str]]:
    """`run`: config, dataset, eval_dataset, rewards and eval_rewards as they will stand.
    Answers {field: [messages]}, empty when the evaluation can run."""
    config = run["config"] or {}
    if not config.get("eval_steps"):
        return {}
    eval_dataset = run["eval_dataset"]
    if eval_dataset is None and not config.get("eval_holdout_fraction"):
        return {"eval_dataset": [
            f"config.eval_steps is {config['eval_steps']}: choose an evaluation dataset, or set "
            "config.eval_holdout_fraction to hold out part of the training dataset"]}
    judged_on = eval_dataset or run["dataset"]
    judges = run["eval_rewards"] or run["rewards"]
    missing = _missing_columns(judged_on, judges)
    if missing:
        field = "eval_rewards" if run["eval_rewards"] else "rewards"
        where = f"evaluation dataset {judged_on.name!r}" if eval_dataset else f"dataset {judged_on.name!r}"
        return {field: [f"reward {reward!r} reads column {column!r}, which the {where} does not have "
                        f"(columns: {', '.join(judged_on.columns) or 'none'})" for reward, column in missing]}
    return {}


def _missing_columns(dataset, rewards) -> list[tuple[str, str]]:
    """(reward, column) pairs a dataset lacks; a dataset whose columns are not known yet (a hub
    dataset is only loaded by a worker) is not checked."""
    if dataset is None or not dataset.columns:
        return []
    return [(reward.name, column) for reward in rewards if reward.kind == "builtin"
            for column in columns_read(reward.builtin, reward.params) if column not in dataset.columns]
