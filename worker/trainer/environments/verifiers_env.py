"""A verifiers environment named by id (being built: see the issue's verifiers part)."""
import importlib.util

from worker.trainer.spec import EnvironmentSpec


def load_verifiers_environment(spec: EnvironmentSpec):
    from worker.trainer.environments.loading import EnvironmentSetupError

    if importlib.util.find_spec("verifiers") is None:
        raise EnvironmentSetupError(f"environment {spec.name!r} names the verifiers environment "
                                    f"{spec.verifiers_id!r}, but the verifiers package is not installed on this worker")
    raise EnvironmentSetupError("verifiers environments are not supported yet")
