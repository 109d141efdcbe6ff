"""The async GRPO trainer: a standalone program that never imports Django or Celery.

Keep this package's import light: the control plane imports its schemas
(config, spec, events) without pulling in torch.
"""
