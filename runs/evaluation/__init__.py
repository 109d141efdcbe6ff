"""Evaluation during training, seen from the control plane: what a run is judged on, its outcomes
(one example followed, across runs), the API, the run page's panel and the admin."""
