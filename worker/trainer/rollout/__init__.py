"""Rollouts: sampling groups of completions from vLLM in the background and scoring them."""
