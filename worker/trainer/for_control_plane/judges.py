"""Judges' and reward models' parameters, checked on save and shown as forms, and the columns a
judge's template reads. What runs them is in served_models, imported only where one is started."""
from worker.trainer.rewards.judges.catalog import JudgeParams, RewardModelParams, judge_columns

__all__ = ["JudgeParams", "RewardModelParams", "judge_columns"]
