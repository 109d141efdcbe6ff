"""The training config schema: one definition validates forms, the API and the trainer's spec.

Field names follow TRL's GRPOConfig / AsyncGRPOConfig where a knob has the same
meaning there, so a researcher's existing settings carry over. Each field's
`group` (model, generation, server, training, lora, algorithm, async, logging) drives how
forms lay it out; its description is the one-line help text. What the GPU knobs add up to is
layout.py's; older configs are translated by legacy.py before they reach the fields.
"""
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

import worker.trainer.config.legacy as legacy
from worker.trainer.config.layout import GpuLayout

GROUPS = {
    "model": "Model",
    "generation": "Generation",
    "server": "Inference server",
    "training": "Training",
    "lora": "LoRA adapter",
    "algorithm": "Loss and advantages",
    "async": "Async pipeline",
    "logging": "Logging and checkpoints",
    "environment": "Environment (multi-turn rollouts)",
    "evaluation": "Evaluation",
    "alarms": "Alarms",
    "distributed": "Several processes and GPUs",
}

# What a run watches in its own signals (runs/alarms/): the names alarm_stop_on takes.
ALARMS = {
    "eval_diverging": "training reward rising while the evaluation falls",
    "entropy_collapse": "entropy below alarm_entropy_min",
    "sampler_drift": "KL to the sampler or importance ratios spiking",
    "no_learning_signal": "most groups with all-equal rewards",
    "truncation": "most completions cut at max_completion_length",
    "judge_disagreement": "a judge paying for what a verifier refuses",
}

DEFAULT_MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"


Switch = Literal["auto", "on", "off"]

MAX_INFLIGHT_TASKS = 100_000
# max_inflight_tasks: a fixed cap, or "auto" (worker/trainer/rollout/inflight_control.py).
InflightCap = Annotated[int, Field(ge=1, le=MAX_INFLIGHT_TASKS)] | Literal["auto"]


def switched_on(setting: str, auto: bool) -> bool:
    """An auto/on/off knob's answer; `auto` is what this machine calls for."""
    return auto if setting == "auto" else setting == "on"


def knob(default, group: str, help: str, **constraints):
    return Field(default, description=help, json_schema_extra={"group": group}, **constraints)


class TrainingConfig(GpuLayout, BaseModel):
    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    # Model
    model: str = knob(DEFAULT_MODEL, "model", "Hub id of the policy to train (org/name), the name of a model the "
                      "operator prepared under the data directory's models/, or a path inside a directory the "
                      "operator lists in MODEL_DIRS.", min_length=1)
    worker_pool: str = knob("default", "model", "Celery queue (worker pool) that runs this training.",
                            pattern=r"^[A-Za-z0-9_.-]{1,64}$")

    # Generation
    num_generations: int = knob(8, "generation", "Completions sampled per prompt (the group size).", ge=2, le=256)
    max_prompt_length: int = knob(512, "generation", "Prompts longer than this many tokens are truncated from the left.", ge=8, le=131072)
    max_completion_length: int = knob(256, "generation", "Maximum tokens generated per completion.", ge=1, le=131072)
    temperature: float = knob(1.0, "generation", "Sampling temperature.", gt=0.0, le=10.0)
    top_p: float = knob(1.0, "generation", "Nucleus sampling: keep the smallest token set with this much probability.", gt=0.0, le=1.0)
    top_k: int = knob(0, "generation", "Keep only the k most likely tokens (0 disables).", ge=0)
    min_p: float = knob(0.0, "generation", "Drop tokens less likely than this fraction of the top token (0 disables).", ge=0.0, le=1.0)
    repetition_penalty: float = knob(1.0, "generation", "Penalty for repeated tokens (1 disables).", gt=0.0, le=10.0)

    # Inference server
    vllm_max_model_len: int | None = knob(None, "server", "Context length vLLM reserves; empty = prompt + completion length.", ge=16)
    vllm_gpu_memory_utilization: float = knob(0.9, "server", "Share of GPU memory vLLM may take (GPU only).", gt=0.0, le=1.0)
    vllm_kv_cache_gib: int = knob(2, "server", "KV cache size in GiB on CPU servers.", ge=1, le=512)
    vllm_cpu_cores: int | None = knob(
        None, "server", "CPU cores vLLM generates on when cpu_sharing splits the cores; empty = half "
        "of them (at least one).", ge=1, le=4096)
    vllm_enforce_eager: bool = knob(True, "server", "Skip graph compilation: faster start, slower generation on GPU.")
    vllm_request_timeout_s: float = knob(120.0, "server", "Timeout of one generation request, in seconds.", gt=0.0)
    vllm_startup_timeout_s: float = knob(300.0, "server", "How long to wait for the server's /health.", gt=0.0)

    # Training
    learning_rate: float = knob(1e-6, "training", "Peak learning rate of AdamW.", gt=0.0, le=1.0)
    lr_scheduler_type: Literal["constant", "linear", "cosine"] = knob("constant", "training", "Schedule after warmup.")
    warmup_steps: int = knob(0, "training", "Steps of linear warmup from 0 to the learning rate.", ge=0)
    weight_decay: float = knob(0.0, "training", "AdamW weight decay.", ge=0.0, le=1.0)
    adam_beta1: float = knob(0.9, "training", "AdamW beta1.", ge=0.0, lt=1.0)
    adam_beta2: float = knob(0.999, "training", "AdamW beta2.", ge=0.0, lt=1.0)
    per_device_train_batch_size: int = knob(8, "training", "Completions per device per micro-batch.", ge=1, le=4096)
    gradient_accumulation_steps: int = knob(1, "training", "Micro-batches accumulated per optimizer step.", ge=1, le=1024)
    max_steps: int = knob(100, "training", "Optimizer steps to train.", ge=1, le=10_000_000)
    max_grad_norm: float = knob(1.0, "training", "Gradient clipping norm (0 disables).", ge=0.0)
    gradient_checkpointing: bool = knob(False, "training", "Trade compute for memory by recomputing activations.")
    bf16: Switch = knob("auto", "training", "Train in bfloat16: auto uses it where the hardware computes it faster than fp32 (GPUs, CPUs with AMX).")
    share_prompts: Switch = knob(
        "auto", "training", "Pack a micro-batch's completions of one prompt behind a single copy of it "
        "(fewer tokens to train, the same log-probabilities). auto: on a CPU; off on GPUs, where "
        "the packing mask would rule out FlashAttention.")
    seed: int = knob(42, "training", "Random seed for data order, sampling and initialisation.", ge=0, le=2**32 - 1)
    init_checkpoint: int | None = knob(None, "training", "Start from this checkpoint (its id) of a run you can see: "
                                       "its weights (with LoRA, its adapter) are the initial policy; the optimizer "
                                       "and step start afresh. The checkpoint's run must have the same model and "
                                       "lora setting; empty = the model itself.", ge=1)

    # LoRA adapter
    lora: bool = knob(False, "lora", "Train a LoRA adapter instead of every weight: the base model stays frozen, "
                      "the KL reference is the base with the adapter off.")
    lora_r: int = knob(16, "lora", "Rank of the adapter's matrices.", ge=1, le=4096)
    lora_alpha: float = knob(32.0, "lora", "Scale of the adapter's update (alpha / r multiplies it).", gt=0.0, le=65536.0)
    lora_dropout: float = knob(0.0, "lora", "Dropout on the adapter's input while training.", ge=0.0, lt=1.0)
    lora_target_modules: str = knob("", "lora", "Linear layers that get an adapter, comma-separated (q_proj,v_proj); "
                                    "empty = the family's attention and MLP projections.", max_length=1000)
    lora_serving: Literal["auto", "adapter", "merged"] = knob(
        "auto", "lora", "What vLLM is given at each weight sync: the adapter alone (a small sync; vLLM computes "
        "the adapter beside the base model) or the weights merged into the base (a whole-model sync; the base "
        "model's decoding speed). auto: the adapter on GPUs, merged weights on CPUs, where vLLM decodes through "
        "an adapter at about a third of the base model's speed.")

    # Loss and advantages
    loss_type: Literal["dapo", "grpo", "dr_grpo", "bnpo"] = knob("dapo", "algorithm", "How token losses are aggregated.")
    scale_rewards: Literal["group", "batch", "none"] = knob("group", "algorithm", "Divide advantages by the reward std of the group, the batch, or not at all.")
    epsilon: float = knob(0.2, "algorithm", "Lower clipping range of the importance ratio.", gt=0.0, le=1.0)
    epsilon_high: float | None = knob(0.28, "algorithm", "Upper clipping range; empty = same as epsilon.", gt=0.0, le=10.0)
    beta: float = knob(0.0, "algorithm", "KL coefficient against the reference model (0 loads no reference).", ge=0.0)
    importance_sampling_correction: bool = knob(True, "algorithm", "Correct for the sampler's log-probabilities differing from the trainer's.")
    importance_sampling_mode: Literal["truncate", "mask"] = knob("truncate", "algorithm", "Cap large sampler ratios (truncate) or drop those tokens (mask).")
    importance_sampling_cap: float = knob(2.0, "algorithm", "Cap on the sampler importance ratio.", ge=1.0)

    # Async pipeline
    max_staleness: int = knob(4, "async", "Samples generated more than this many weight versions ago are dropped.", ge=0, le=1000)
    max_inflight_tasks: InflightCap = knob(
        64, "async", f"Groups in flight (submitted to vLLM, not yet scored) at once: a whole number from 1 to "
        f"{MAX_INFLIGHT_TASKS}, or auto: the trainer sets the cap each step from the measured generation and "
        "training rates, within the staleness bound (docs/capabilities/trainer.md).")
    queue_maxsize: int = knob(256, "async", "Scored groups buffered between rollout and training.", ge=1, le=1_000_000)
    weight_sync_steps: int = knob(1, "async", "Push new weights to the server every this many steps.", ge=1)
    weight_sync_backend: Literal["filesystem", "nccl"] = knob("filesystem", "async", "filesystem works everywhere; nccl needs GPUs.")
    cpu_sharing: Literal["auto", "split_cores", "take_turns", "overlap"] = knob(
        "auto", "async", "How vLLM and the trainer share a CPU's cores. split_cores: vLLM keeps "
        "vllm_cpu_cores of them while it has requests and the trainer takes them back while it has "
        "none; take_turns: vLLM is paused while a step trains; overlap: both run at once (what GPUs "
        "do). auto: split_cores when training on a CPU with 2 cores or more, take_turns on one core, "
        "overlap on GPUs.")

    # Logging and checkpoints
    logging_steps: int = knob(1, "logging", "Send metrics every this many steps.", ge=1)
    log_completions: bool = knob(True, "logging", "Send sampled completions to the run page.")
    samples_groups_per_step: int = knob(
        0, "logging", "Groups of completions stored per kept step (0: every group), picked at random with the "
        "run's seed; the others still count in the metrics.", ge=0, le=100_000)
    samples_every_steps: int = knob(1, "logging", "Store completions every this many steps.", ge=1, le=1_000_000)
    save_steps: int = knob(50, "logging", "Save a checkpoint every this many steps (and at the end).", ge=1)
    save_total_limit: int | None = knob(3, "logging", "Keep only the newest N checkpoints; empty keeps all.", ge=1)

    # Environment (multi-turn rollouts)
    max_turns: int = knob(4, "environment", "Assistant turns an episode may take before it is stopped.", ge=1, le=1000)
    max_tool_calls: int = knob(4, "environment", "Tool calls an episode may make; calls past this get an error "
                               "message back instead of a result.", ge=0, le=10_000)
    max_episode_tokens: int = knob(1024, "environment", "Tokens the model may generate over a whole episode; each "
                                   "turn is also held to max_completion_length.", ge=1, le=1_000_000)
    max_episode_context: int | None = knob(
        None, "environment", "Tokens an episode's context may grow to (prompt, answers, environment messages); "
        "empty = what the server holds (vllm_max_model_len): raise that for longer episodes.", ge=16, le=10_000_000)
    environment_timeout_s: float = knob(10.0, "environment", "How long an environment may take to answer one "
                                        "turn; past it the episode ends with reward None.", gt=0.0, le=3600.0)
    tool_call_format: Literal["auto", "hermes", "text"] = knob(
        "auto", "environment", "How tool calls are written: hermes, <tool_call>{json}</tool_call> as chat templates "
        "with tools write them; text, <name>argument</name> (docs/capabilities/environments.md). auto: hermes where the "
        "model's chat template takes tools, else text.")

    # Evaluation
    eval_steps: int = knob(0, "evaluation", "Evaluate before the first step, every this many steps and after the "
                           "last (0: never). Needs an evaluation dataset or eval_holdout_fraction.", ge=0, le=10_000_000)
    eval_holdout_fraction: float = knob(
        0.0, "evaluation", "Share of the training dataset's distinct problems held out for evaluation, each once (training "
        "never sees a row of them) "
        "when the run names no evaluation dataset.", ge=0.0, le=0.5)
    eval_examples: int = knob(64, "evaluation", "Examples in each evaluation: the first this many of the evaluation "
                              "set, the same ones every time.", ge=1, le=1024)
    eval_samples: int = knob(1, "evaluation", "Answers per example: 1 decodes greedily; more are sampled at "
                             "eval_temperature and give pass@k with k = this.", ge=1, le=64)
    eval_temperature: float = knob(1.0, "evaluation", "Sampling temperature when eval_samples is above 1.",
                                   gt=0.0, le=10.0)
    eval_pass_threshold: float = knob(1.0, "evaluation", "An answer passes when its evaluation reward (the weighted "
                                      "sum) reaches this.", ge=-1e6, le=1e6)

    # Alarms
    alarm_entropy_min: float = knob(0.05, "alarms", "entropy_collapse: the policy's entropy, nats a token, stays "
                                    "below this.", ge=0.0, le=100.0)
    alarm_kl_to_sampler_max: float = knob(1.0, "alarms", "sampler_drift: the KL between trainer and sampler "
                                          "log-probabilities rises above this.", gt=0.0, le=1e6)
    alarm_importance_ratio_max: float = knob(20.0, "alarms", "sampler_drift: a token's importance ratio rises above "
                                             "this.", gt=1.0, le=1e12)
    alarm_equal_rewards_max: float = knob(0.8, "alarms", "no_learning_signal: the share of groups whose rewards are "
                                          "all equal (no gradient) stays above this.", gt=0.0, le=1.0)
    alarm_truncated_max: float = knob(0.5, "alarms", "truncation: the share of completions cut at "
                                      "max_completion_length stays above this.", gt=0.0, le=1.0)
    alarm_eval_drop: float = knob(0.05, "alarms", "eval_diverging: the evaluation's pass@1 falls by more than this "
                                  "between two evaluations while the training reward rises.", gt=0.0, le=1e6)
    alarm_judge_disagreement_max: float = knob(0.3, "alarms", "judge_disagreement: the share of completions a "
                                               "verifier refuses that a judge pays for stays above this.",
                                               gt=0.0, le=1.0)
    alarm_patience: int = knob(3, "alarms", "Logged steps in a row a slow signal (entropy, equal rewards, "
                               "truncation, a judge's disagreement) must hold before its alarm trips; spikes trip at once.", ge=1, le=10_000)
    alarm_stop_on: str = knob("", "alarms", "Alarms that checkpoint and cancel the run when they trip, "
                              "comma-separated (entropy_collapse,eval_diverging); empty: alarms only warn.",
                              max_length=1000)

    # Several processes and GPUs
    distributed: Literal["auto", "none", "ddp", "fsdp2"] = knob(
        "auto", "distributed", "How the trainer's processes share the model. none: one process; ddp: each process "
        "holds the whole model and trains its share of every batch, gradients averaged; fsdp2: parameters, "
        "gradients and optimizer state sharded over the processes (for models too big for one device). auto: "
        "none with one process, ddp for LoRA or a model whose training state fits half a device, fsdp2 "
        "otherwise; the run's log says which.")
    trainer_processes: int | None = knob(
        None, "distributed", "Trainer processes; empty = one per GPU the worker gives the trainer, one on a CPU. "
        "Each trains gradient_accumulation_steps / trainer_processes micro-batches of every step, so a step "
        "trains the same batch at any count.", ge=1, le=1024)
    trainer_machines: int = knob(
        1, "distributed", "Machines the trainer spans, on a pool that is a Ray cluster (docs/deploying/cluster.md): "
        "one torch.distributed job over trainer_processes on each (empty: one on each), rank 0 on the machine "
        "that also serves vLLM. Each process trains gradient_accumulation_steps / (trainer_processes × "
        "trainer_machines) micro-batches of every step.", ge=1, le=256)
    inference_machines: int = knob(
        0, "distributed", "Machines of their own for vLLM, on a pool that is a Ray cluster: one server on each "
        "(inference_gpus GPUs: tensor × data parallel), rollouts spread over them, the trainer's weights pushed "
        "to each over HTTP at every sync. 0: vLLM runs on the trainer's first machine.", ge=0, le=64)
    vllm_tensor_parallel_size: int = knob(1, "distributed", "GPUs each vLLM engine splits the model over "
                                          "(--tensor-parallel-size).", ge=1, le=64)
    vllm_data_parallel_size: int = knob(1, "distributed", "vLLM engines that serve rollouts side by side, each on "
                                        "vllm_tensor_parallel_size GPUs (--data-parallel-size).", ge=1, le=64)
    judge_gpus: int = knob(0, "distributed", "GPUs the run's served judges take from the worker's (a second vLLM "
                           "server beside the policy's); 0: on a GPU worker, a served judge shares the policy "
                           "server's GPUs. Unused on a CPU.", ge=0, le=64)

    @field_validator("alarm_stop_on")
    @classmethod
    def _alarm_names(cls, value: str) -> str:
        names = [name.strip() for name in value.split(",") if name.strip()]
        if bad := [name for name in names if name not in ALARMS]:
            raise PydanticCustomError("alarm_names", "unknown alarm {bad}; alarms are {known}",
                                      {"bad": ", ".join(repr(name) for name in bad), "known": ", ".join(ALARMS)})
        return ",".join(dict.fromkeys(names))

    @field_validator("max_inflight_tasks", mode="wrap")
    @classmethod
    def _inflight_cap(cls, value, handler):
        """One message for a value that is neither a cap nor auto (pydantic's union gives one per
        member, each keyed under a member's name that no form field has)."""
        refused = PydanticCustomError("inflight_cap", "a whole number from 1 to {most}, or \"auto\"; not {value}",
                                      {"most": MAX_INFLIGHT_TASKS, "value": repr(value)})
        if isinstance(value, bool):  # pydantic would read true as 1
            raise refused
        try:
            return handler(value)
        except ValidationError:
            raise refused from None

    @field_validator("lora_target_modules")
    @classmethod
    def _layer_names(cls, value: str) -> str:
        names = [name.strip() for name in value.split(",") if name.strip()]
        if bad := [name for name in names if not name.isidentifier()]:
            raise PydanticCustomError("layer_names", "layer names separated by commas (q_proj,v_proj), not {bad}",
                                      {"bad": ", ".join(repr(name) for name in bad)})
        return ",".join(names)

    @model_validator(mode="before")
    @classmethod
    def _translate_legacy_knobs(cls, data):
        """Older configs' knobs, as today's fields name them (legacy.py)."""
        return legacy.translated(data, cls.model_fields)

    @model_validator(mode="after")
    def _check_cross_field_rules(self):
        for field, message in self._cross_field_problems():
            # The field travels in ctx so that error reports can attach the
            # message to the field a person has to change.
            raise PydanticCustomError("cross_field", "{message}", {"field": field, "message": message})
        return self

    def _cross_field_problems(self):
        """Rules between knobs, the same on every machine: what the model on a machine allows
        (its family, its LoRA layers) is checked apart, by worker/trainer/machine_checks.py."""
        batch = self.per_device_train_batch_size * self.gradient_accumulation_steps
        if batch % self.num_generations:
            yield "per_device_train_batch_size", (
                f"per_device_train_batch_size × gradient_accumulation_steps ({batch}) must be a "
                f"multiple of num_generations ({self.num_generations}): each step trains whole groups"
            )
        elif self.samples_groups_per_step > batch // self.num_generations:
            yield "samples_groups_per_step", (
                f"samples_groups_per_step ({self.samples_groups_per_step}) is more than the "
                f"{batch // self.num_generations} groups a step trains; 0 keeps every group")
        yield from self.layout_problems()
        if self.epsilon_high is not None and self.epsilon_high < self.epsilon:
            yield "epsilon_high", f"epsilon_high ({self.epsilon_high}) must be at least epsilon ({self.epsilon})"
        if self.warmup_steps and self.warmup_steps >= self.max_steps:
            yield "warmup_steps", f"warmup_steps ({self.warmup_steps}) must be fewer than max_steps ({self.max_steps})"
        needed = self.max_prompt_length + self.max_completion_length
        if self.vllm_max_model_len is not None and self.vllm_max_model_len < needed:
            yield "vllm_max_model_len", (
                f"vllm_max_model_len ({self.vllm_max_model_len}) is shorter than "
                f"max_prompt_length + max_completion_length ({needed})"
            )

    def serves_adapter(self, device: str) -> bool:
        """Whether vLLM is given a LoRA run's adapter alone rather than merged weights
        (lora_serving; auto: where the server computes on a GPU, `device` "cuda").
        `python -m bench.lora` measures both sides of the choice on a CPU."""
        return self.lora and (self.lora_serving == "adapter" or (self.lora_serving == "auto" and device == "cuda"))

    @property
    def lora_targets(self) -> list[str]:
        """lora_target_modules as names; empty: the family's defaults (worker/trainer/training/lora.py)."""
        return [name.strip() for name in self.lora_target_modules.split(",") if name.strip()]

    @property
    def alarms_that_stop(self) -> list[str]:
        return [name for name in self.alarm_stop_on.split(",") if name]

    @property
    def evaluates(self) -> bool:
        return self.eval_steps > 0

    @property
    def completions_per_step(self) -> int:
        return self.per_device_train_batch_size * self.gradient_accumulation_steps


def errors_by_field(exc: ValidationError) -> dict[str, list[str]]:
    """A pydantic error as {field: [messages]}, the shape forms and the API report."""
    errors: dict[str, list[str]] = {}
    for error in exc.errors():
        ctx = error.get("ctx") or {}
        if error["type"] == "cross_field":
            field = ctx["field"]
        elif error["loc"]:
            field = ".".join(str(part) for part in error["loc"])
        else:
            field = "non_field_errors"
        message = error["msg"]
        if error["type"] == "extra_forbidden":
            message = f"unknown setting {field!r}"
        errors.setdefault(field, []).append(message)
    return errors


def field_groups() -> dict[str, list[str]]:
    """Field names by group, in declaration order, for forms and docs."""
    grouped: dict[str, list[str]] = {group: [] for group in GROUPS}
    for name, info in TrainingConfig.model_fields.items():
        extra = info.json_schema_extra
        assert isinstance(extra, dict), f"{name} is not declared with knob()"
        grouped[str(extra["group"])].append(name)
    return grouped


def translated_sample_knobs(data):
    """`data` with the sample knobs of older configs translated (legacy.py), against this schema's
    defaults: for a page that reads them before validating."""
    return legacy.translated_sample_knobs(data, TrainingConfig.model_fields)
