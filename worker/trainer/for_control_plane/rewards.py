"""Rewards as the control plane checks, shows and dry-runs them: the built-ins' catalog, the
static check of reward code before it is saved, and the columns a built-in reads."""
from worker.trainer.rewards.catalog import BUILTINS, columns_read
from worker.trainer.rewards.source_check import SIGNATURE, source_problems

__all__ = ["BUILTINS", "SIGNATURE", "columns_read", "source_problems"]
