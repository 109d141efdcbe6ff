"""The run's model on this machine: the default one is prepared here once, the first time it is asked."""
from worker.trainer.spec import LaunchSpec


def prepared_model(spec: LaunchSpec) -> str:
    from worker.trainer.config import DEFAULT_MODEL

    if spec.model == DEFAULT_MODEL:
        from worker.trainer.models.prepare import prepare_default_model

        prepare_default_model()  # quick when already done; needed once per machine
    return spec.model
