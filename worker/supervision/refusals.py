"""What this worker refuses before it starts anything: a message for a run the control plane no
longer wants started, a run over several machines given none, a config its model here cannot train."""
from worker.supervision.model_here import prepared_model
from worker.trainer.config import TrainingConfig
from worker.trainer.reporting.session import ReportingSession
from worker.trainer.spec import LaunchSpec


def still_wanted(spec: LaunchSpec, report: ReportingSession) -> bool:
    """False for a redelivered message: the run already started, finished or was cancelled."""
    report.log(f"worker received run {spec.run_id} (attempt {spec.attempt})")
    report.reporter.flush(timeout_s=60)
    reply = report.reporter.last_reply
    if reply is None:
        raise RuntimeError("the control plane did not answer; not starting a run nobody can follow")
    return reply.status == "queued" and not reply.cancel_requested


def refusal_here(spec: LaunchSpec, trainer_machines_given: bool, inference_machines_given: bool) -> str | None:
    """Why the run fails here with nothing started, in the words of its reason; None: it may start."""
    return machines_missing(spec.config, trainer_machines_given, inference_machines_given) or \
        config_refused_here(spec)


def machines_missing(config: TrainingConfig, trainer_machines_given: bool,
                     inference_machines_given: bool) -> str | None:
    """A run over several machines, given none (a worker that runs its runs on its own machine)."""
    missing = (config.trainer_machines > 1 and not trainer_machines_given) or \
        (config.inference_machines > 0 and not inference_machines_given)
    if not missing:
        return None
    return (f"{config.machines_asked()}: a run over several machines runs on a pool that is a Ray cluster "
            "(docs/deploying/cluster.md); this worker runs its runs on its own machine")


def config_refused_here(spec: LaunchSpec) -> str | None:
    """The config against the model on this worker, each field to change named with why: the schema
    does not read the machine it validates on (worker/trainer/machine_checks.py), and here the model must be."""
    from worker.trainer.machine_checks import problems_here

    config = spec.config.model_copy(update={"model": prepared_model(spec)})
    if not (problems := problems_here(config, model_must_be_here=True)):
        return None
    named = "; ".join(f"config.{field}: {message}" for field, message in problems)
    return f"the run's config cannot train on this worker: {named}"
