"""Reward functions and their dry runs, as stored."""
