"""Before anything loads: the names the spec gives refused or accepted, and the checkpoint the
run resumes or starts from on this disk."""
from worker.trainer.checkpoints.fetch import local_checkpoint
from worker.trainer.data.loading import checked_hub_id
from worker.trainer.models.paths import ModelRefused, model_problem
from worker.trainer.spec import LaunchSpec
from worker.trainer.startup.starting_run import StartingRun


def refuse_paths(spec: LaunchSpec) -> None:
    """Names, not paths, checked before anything is loaded: a spec from an older control plane
    may name another run's checkpoint folder as its model or a local folder as its dataset
    (models/paths.py, data/loading.py); the run fails saying which."""
    if problem := model_problem(spec.model):
        raise ModelRefused(problem)
    for dataset in (spec.dataset, spec.eval_dataset):
        if dataset is not None and dataset.kind == "hub":
            checked_hub_id(dataset.hub_id or "")


def with_local_checkpoints(run: StartingRun) -> StartingRun:
    """The run with its spec naming the checkpoint folders on this disk (fetched where needed)."""
    run = run.with_spec(checkpoint_to_resume(run))
    return run.with_spec(checkpoint_to_start_from(run))


def checkpoint_to_resume(run: StartingRun) -> LaunchSpec:
    """A resumed run's checkpoint, downloaded when another worker wrote it (checkpoints/fetch.py)."""
    spec = run.spec
    if not spec.resume_from:
        return spec
    local, fetched = local_checkpoint(spec.resume_from, spec.resume_url, run.token, run.output_dir,
                                      on_wait=run.warn)
    if fetched:
        run.report.log(f"checkpoint to resume from fetched from the control plane into {local}")
    return spec.model_copy(update={"resume_from": local})


def checkpoint_to_start_from(run: StartingRun) -> LaunchSpec:
    """init_checkpoint's folder, downloaded with this run's token (which may fetch that one
    checkpoint of another run and no other), beside the run's own checkpoints. A resume
    starts from the run's own checkpoint instead."""
    spec = run.spec
    if spec.resume_from or not spec.init_from:
        return spec.model_copy(update={"init_from": None})
    local, fetched = local_checkpoint(spec.init_from, spec.init_url, run.token, run.output_dir,
                                      on_wait=run.warn, folder="start-from")
    if fetched:
        run.report.log(f"checkpoint {run.config.init_checkpoint} to start from fetched from the control "
                       f"plane into {local}")
    return spec.model_copy(update={"init_from": local})
