"""Evaluation during training, seen from the control plane: what a run is judged on, and its outcomes."""
