"""What a run's rewards and evaluation settings must satisfy before it is created: refused here,
with the field and the column named, rather than found out by a worker minutes later."""
from runs.rewards.columns import column_problems


def training_problems(run: dict) -> dict[str, list[str]]:
    """`run`: dataset and rewards as they will stand. {field: [messages]}, empty when each
    training reward finds the columns it reads in the training dataset."""
    dataset = run["dataset"]
    if dataset is None:
        return {}
    problems = column_problems(dataset, run["rewards"], f"dataset {dataset.name!r}")
    return {"rewards": problems} if problems else {}


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
    if judged_on is None:
        return {}
    judges = run["eval_rewards"] or run["rewards"]
    where = f"evaluation dataset {judged_on.name!r}" if eval_dataset else f"dataset {judged_on.name!r}"
    problems = column_problems(judged_on, judges, where)
    if problems:
        return {"eval_rewards" if run["eval_rewards"] else "rewards": problems}
    return {}
