"""Judges' and reward models' parameters, checked on save and shown as forms, and the columns a
judge's template reads, and which addresses an endpoint judge may reach. What runs them is in
served_models, imported only where one is started."""
from worker.trainer.rewards.judges.addresses import is_public_address
from worker.trainer.rewards.judges.catalog import JudgeParams, RewardModelParams, judge_columns

__all__ = ["JudgeParams", "RewardModelParams", "is_public_address", "judge_columns"]
