"""Evaluation during training: held-out examples answered by the server at the current model
version, judged by the evaluation rewards, beside the training loop rather than inside it."""
