"""Named starting points a person picks instead of typing every knob: the values a preset sets,
the schema's defaults for the rest (runs/configs/values.py merges them, the schema checks them)."""

# Sized for a 2-core CPU running vLLM and the trainer side by side: about 20 s a step
# for SmolLM2-135M; a learning rate high enough to move in the ~40 steps of 15 minutes.
CPU_DEMO = {
    "num_generations": 8, "max_completion_length": 128, "max_prompt_length": 256,
    # 16 completions a step in micro-batches of 2: as fast on a CPU as one batch of 16
    # and under half the memory (peak RSS 3.7 GiB instead of 9: bench/LOG.md).
    "per_device_train_batch_size": 2, "gradient_accumulation_steps": 8,
    # Temperature 1.0 and a learning rate of 1e-5: at 0.8 and 2e-5 the entropy collapsed within
    # 20 steps and the held-out accuracy did not move; now it rises and the entropy holds
    # (bench/README.md, learning).
    "learning_rate": 1e-5, "max_steps": 60,
    "max_inflight_tasks": 16, "save_steps": 20, "temperature": 1.0,
    # 16 groups of 8 share the CPU: when the machine is busy a request can take minutes,
    # and a timed-out request is resubmitted, which only adds to the queue.
    "vllm_request_timeout_s": 600.0,
    # Judged on 64 rows held out of the training data (greedy) before the first step, every 10
    # steps and after the last: the run page shows held-out accuracy from its first minutes.
    "eval_steps": 10, "eval_holdout_fraction": 0.02, "eval_examples": 64,
}
PRESETS: dict[str, dict] = {
    "cpu-demo": CPU_DEMO,
    # The demo with a LoRA adapter (r=16 on attention and MLP): an adapter moves the model less
    # per step than full fine-tuning at the same rate, hence ten times the rate.
    "cpu-demo-lora": {**CPU_DEMO, "lora": True, "learning_rate": 2e-4},
    "gsm8k-one-gpu": {
        "num_generations": 8, "max_completion_length": 512, "max_prompt_length": 512,
        "per_device_train_batch_size": 32, "gradient_accumulation_steps": 2,
        "learning_rate": 1e-6, "max_steps": 500, "max_inflight_tasks": 256,
        "worker_pool": "gpu", "vllm_enforce_eager": False, "gradient_checkpointing": True,
    },
}
