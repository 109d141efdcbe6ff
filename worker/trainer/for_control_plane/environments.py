"""Environments as the control plane checks and shows them before they are saved: the built-ins'
catalog, the static check of environment code, and whether a verifiers environment can be found."""
from worker.trainer.environments.catalog import BUILTIN_ENVIRONMENTS, DESCRIPTIONS
from worker.trainer.environments.source_check import SIGNATURE, source_problems
from worker.trainer.environments.verifiers_check import installed, verifiers_problem

__all__ = ["BUILTIN_ENVIRONMENTS", "DESCRIPTIONS", "SIGNATURE", "installed", "source_problems", "verifiers_problem"]
