"""Building what a training run needs from its config: precision, model, optimizer, schedule."""
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch

from worker.trainer.config import switched_on
from worker.trainer.distributed.strategy import Choice, choose_strategy
from worker.trainer.distributed.topology import SINGLE, Topology
from worker.trainer.models.paths import resolve_model_path
from worker.trainer.training.policy import PolicyForward
from worker.trainer.training.precision import bf16_is_fast

if TYPE_CHECKING:
    from accelerate import Accelerator
    from transformers import PreTrainedTokenizerBase

    from worker.trainer.training.step import StepContext


@dataclass(kw_only=True)
class TrainingParts:
    """The policy being trained, its tokenizer, what updates it, and the reference model for the KL
    term (None when beta is 0; with LoRA the policy itself, whose adapter is switched off for the
    reference forward). `model` is the policy itself (saved, served, its parameters trained);
    `trained` is the module a step calls: a PolicyForward over it, wrapped by accelerate (DDP
    with several processes) or sharded by FSDP2."""
    model: torch.nn.Module
    trained: torch.nn.Module
    tokenizer: "PreTrainedTokenizerBase"
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    accelerator: "Accelerator"
    ref_model: torch.nn.Module | None
    topology: Topology = SINGLE
    sharing: Choice = Choice("none", "one process")  # how the processes share the model
    _served: object | None = field(default=None, init=False, repr=False)

    @property
    def on_gpu(self) -> bool:
        return self.accelerator.device.type == "cuda"

    def unwrapped_model(self) -> torch.nn.Module:
        """The policy without any wrapper: what is saved (with LoRA: the adapter) and served."""
        return self.model

    def step_context(self, config, **options) -> "StepContext":
        """What train_step needs from these parts and the config's step settings; `options`
        sets the rest (share_prompts, shape_multiple, before_micro_batch)."""
        from worker.trainer.training.step import StepContext, loss_settings_of

        return StepContext(
            model=self.trained, optimizer=self.optimizer, scheduler=self.scheduler, accelerator=self.accelerator,
            ref_model=self.ref_model, loss_settings=loss_settings_of(config),
            num_generations=config.num_generations, scale_rewards=config.scale_rewards,
            micro_batch_size=config.per_device_train_batch_size, max_grad_norm=config.max_grad_norm,
            temperature=config.temperature, pad_id=pad_token_id(self.tokenizer), topology=self.topology, **options)

    def training_context(self, config, before_micro_batch=None) -> "StepContext":
        """The step context every process of a run builds alike: the same packing and padding
        give the same micro-batches, so each process enters as many reductions (step.py)."""
        from worker.trainer.training.onednn_cache import shape_multiple_for

        return self.step_context(config, share_prompts=use_shared_prompts(config.share_prompts, self.on_gpu),
                                 shape_multiple=shape_multiple_for(self.on_gpu,
                                                                   self.accelerator.mixed_precision == "bf16"),
                                 before_micro_batch=before_micro_batch)

    def served_model(self):
        """What the weight sync sends to vLLM: the model, or with LoRA a lora.ServedLora (the
        adapter, or the merged weights), made once: it remembers where the adapter's tensors are."""
        from worker.trainer.training.lora import served_weights

        if self._served is None:
            self._served = served_weights(self.unwrapped_model())
        return self._served


def build_training_parts(base_model: str, config, resume_from: str | None = None,
                         topology: Topology = SINGLE) -> TrainingParts:
    """The policy: the base model, or the weights of the checkpoint `resume_from` (a resumed
    run's, or the one init_checkpoint names: only a resume loads its trainer state too); with
    LoRA always the base under an adapter (a fresh one, or the checkpoint's). The reference for
    beta > 0 is the base model: a copy of it, or with LoRA the policy itself with its adapter off
    (lora.py). With several processes, shared as the `distributed` knob says
    (distributed/strategy.py). The base model is a name resolved here, where a path the operator
    does not allow is refused (models/paths.py); a checkpoint's folder is one the trainer fetched
    or was given by the control plane."""
    from worker.trainer.training import lora

    base_model = resolve_model_path(base_model)
    if config.lora:
        model, tokenizer = load_policy(base_model, config.gradient_checkpointing)
        if config.gradient_checkpointing:
            model.enable_input_require_grads()  # the frozen embeddings would cut the recomputed graph
        model = lora.load_adapter(model, resume_from) if resume_from else lora.attach_adapter(model, config)
    else:
        model, tokenizer = load_policy(resume_from or base_model, config.gradient_checkpointing)
    accelerator = make_accelerator(config)
    sharing = choose_strategy(config.distributed, topology.world_size, parameters=model.num_parameters(),
                              lora=config.lora, device_bytes=device_memory(accelerator.device),
                              reference=config.beta > 0 and not config.lora)
    trained: torch.nn.Module = PolicyForward(model)
    if sharing.strategy == "fsdp2":
        from worker.trainer.distributed.sharding import shard_with_fsdp2

        trained = shard_with_fsdp2(trained)  # before the optimizer: it must hold the shards
    optimizer = make_optimizer(model, config)
    scheduler = make_scheduler(optimizer, config)
    if sharing.strategy == "fsdp2":
        optimizer, scheduler = accelerator.prepare(optimizer, scheduler)
    else:  # on its device; in DDP when there are several processes
        trained, optimizer, scheduler = accelerator.prepare(trained, optimizer, scheduler)
    if config.beta > 0:
        ref_model = model if config.lora else reference_model(base_model, sharing.strategy, accelerator.device)
    else:
        ref_model = None
    return TrainingParts(model=model, trained=trained, tokenizer=tokenizer, optimizer=optimizer,
                         scheduler=scheduler, accelerator=accelerator, ref_model=ref_model, topology=topology,
                         sharing=sharing)


def device_memory(device: torch.device) -> int | None:
    """Bytes of one device's memory; None on a CPU (the auto rule then replicates)."""
    if device.type != "cuda":
        return None
    return torch.cuda.get_device_properties(device).total_memory


def use_bf16(setting: str) -> bool:
    """auto: where bf16 is faster than fp32 (worker/trainer/training/precision.py)."""
    return switched_on(setting, auto=bf16_is_fast())


def use_shared_prompts(setting: str, training_on_gpu: bool) -> bool:
    """auto: on a CPU; on GPUs the packing mask would rule out FlashAttention."""
    return switched_on(setting, auto=not training_on_gpu)


def make_accelerator(config):
    from accelerate import Accelerator

    return Accelerator(mixed_precision="bf16" if use_bf16(config.bf16) else "no", cpu=not torch.cuda.is_available())


def load_policy(path: str, gradient_checkpointing: bool):
    """The model in fp32 (master weights; with bf16 on, compute runs in it under autocast) and its
    tokenizer, from a resolved model folder, a checkpoint folder or a hub id."""
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    refuse_unsupported_family(AutoConfig.from_pretrained(path))
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    if gradient_checkpointing:
        model.gradient_checkpointing_enable()
        model.config.use_cache = False
    return model, tokenizer


def refuse_unsupported_family(config) -> None:
    """Before any weight is loaded: a family whose logits the trainer cannot reproduce fails
    the run with the supported families named (models/families.py)."""
    from worker.trainer.models.families import logit_transform_of

    logit_transform_of(config)


def reference_model(base_model: str, strategy: str, device: torch.device) -> torch.nn.Module:
    """The frozen base for the KL term; with FSDP2 sharded like the policy (a whole copy in each
    process would undo the sharding), inside a PolicyForward so that its forward gathers."""
    reference = load_reference(base_model)
    if strategy == "fsdp2":
        from worker.trainer.distributed.sharding import shard_with_fsdp2

        return shard_with_fsdp2(PolicyForward(reference))
    return reference.to(device)


def load_reference(model_path: str):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32)
    model.requires_grad_(False)
    return model.eval()


def make_optimizer(model, config):
    trainable = [parameter for parameter in model.parameters() if parameter.requires_grad]
    return torch.optim.AdamW(trainable, lr=config.learning_rate, weight_decay=config.weight_decay,
                             betas=(config.adam_beta1, config.adam_beta2))


def make_scheduler(optimizer, config):
    from transformers import get_scheduler

    name = {"constant": "constant_with_warmup"}.get(config.lr_scheduler_type, config.lr_scheduler_type)
    return get_scheduler(name, optimizer, num_warmup_steps=config.warmup_steps, num_training_steps=config.max_steps)


def pad_token_id(tokenizer) -> int:
    for candidate in (tokenizer.pad_token_id, tokenizer.eos_token_id, 0):
        if candidate is not None:
            return candidate
    return 0
