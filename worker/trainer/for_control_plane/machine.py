"""A training config checked against what this machine holds (worker/trainer/machine_checks.py):
the control plane's serializers call it when a config or a run is saved."""
from worker.trainer.machine_checks import problems_here

__all__ = ["problems_here"]
