"""Reward functions on the control plane: who may author code, and dry runs through the sandbox."""
