"""Pushing the trainer's weights into the running vLLM server, behind one interface
(interface.py: WeightSync; backends.py: make_weight_sync; a failure is inference/server_api.py's
WeightSyncError).

`filesystem` works everywhere (CPU included): safetensors to shared memory, then
the server reloads them. `nccl` broadcasts GPU tensors through vLLM's weight
transfer engine. `lora_adapter` sends a LoRA run's adapter alone. Each returns the
seconds the push took.
"""
