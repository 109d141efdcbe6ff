"""The run's rows: training's, and evaluation's when the run evaluates."""
from worker.trainer.data.fetch import dataset_file
from worker.trainer.data.loading import load_dataset
from worker.trainer.evaluation.eval_set import split_holdout
from worker.trainer.spec import DatasetSpec
from worker.trainer.startup.starting_run import StartingRun


def load_datasets(run: StartingRun):
    """(training rows, evaluation rows or None: the run does not evaluate). Without an evaluation
    dataset the evaluation holds out a seeded share of the training rows, which training then
    never sees."""
    dataset = _load(run, run.spec.dataset)
    if not run.config.evaluates:
        return dataset, None
    if run.spec.eval_dataset is not None:
        return dataset, _load(run, run.spec.eval_dataset)
    kept, held_out = split_holdout(dataset, run.config.eval_holdout_fraction, run.config.seed,
                                   prompt_column=run.spec.dataset.prompt_column)
    run.report.log(f"evaluation holds out {len(held_out)} distinct problems ({len(dataset) - len(kept)} of the "
                   f"dataset's {len(dataset)} rows); training uses the other {len(kept)}")
    return kept, held_out


def _load(run: StartingRun, spec: DatasetSpec):
    """An uploaded dataset's file comes from a shared disk, this worker's cache or the control
    plane (data/fetch.py); the run's log says which."""
    if spec.kind != "file":
        return load_dataset(spec)
    found = dataset_file(spec, run.token, on_wait=run.warn)
    run.report.log(found.describe())
    return load_dataset(spec, found.path)
