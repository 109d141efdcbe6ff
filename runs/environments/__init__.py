"""Environments on the control plane: dry runs of an episode (typed turns or the model), the
built-in library, and what a run on an environment takes from it."""
