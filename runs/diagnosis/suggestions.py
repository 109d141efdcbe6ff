"""The knob that moves the bottleneck, with the numbers that led to it.

Each proposal is checked as the run's config with the change applied, by the config's own
validation (worker.trainer.config.TrainingConfig): one it refuses is dropped, and so is one
that proposes the value the run already has, or one that does not move the bound it is for (a
max_staleness whose staleness bound stays the same, a cap past what the trainer lets be in flight).
"""
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from runs.diagnosis.bottleneck import staleness_bound
from runs.diagnosis.findings import Findings
from runs.diagnosis.run_config import ahead_bound, cores_needed, setting
from worker.trainer.config import TrainingConfig


@dataclass(frozen=True)
class Proposal:
    knob: str
    proposed: Any
    why: str
    also_set: dict[str, Any] = field(default_factory=dict)  # knobs changed with it (a batch kept whole)


def suggestions_for(findings: Findings) -> list[dict]:
    proposals = PROPOSERS.get(findings.bottleneck or "", lambda _: [])(findings)
    return [as_suggestion(p, findings.config) for p in proposals if accepted(p, findings)]


def accepted(proposal: Proposal, findings: Findings) -> bool:
    config = findings.config
    if proposal.proposed == setting(config, proposal.knob) or not moves_its_bound(proposal, findings):
        return False
    try:
        TrainingConfig.model_validate(changed(config, proposal))
    except ValidationError:
        return False
    return True


def changed(config: Mapping[str, Any], proposal: Proposal) -> dict[str, Any]:
    return {**config, **proposal.also_set, proposal.knob: proposal.proposed}


def moves_its_bound(proposal: Proposal, findings: Findings) -> bool:
    """A change to a bound on the groups ahead of the trainer must let more of them be: a
    max_staleness whose bound stays the same (max(groups a step × weight_sync_steps × max_staleness,
    groups a step)), or a fixed cap at or past the cap's limit, changes nothing."""
    config = findings.config
    if proposal.knob == "max_staleness":
        return ahead_bound(changed(config, proposal)) > ahead_bound(config)
    if proposal.knob == "max_inflight_tasks" and isinstance(proposal.proposed, int):
        limit, cap = cap_limit(findings), setting(config, "max_inflight_tasks")
        return min(proposal.proposed, limit) > (min(cap, limit) if isinstance(cap, int) else 0)
    return True


def cap_limit(findings: Findings) -> int:
    """The most groups a fixed in-flight cap can let be in flight: the staleness bound on groups
    ahead of the trainer, and the queue of scored groups (queue_maxsize), as the auto cap's ceiling
    (worker/trainer/rollout/inflight_control.py's cap_bounds)."""
    return min(staleness_bound(findings.window, findings.config), setting(findings.config, "queue_maxsize"))


def as_suggestion(proposal: Proposal, config: Mapping[str, Any]) -> dict:
    return {"knob": proposal.knob, "current": setting(config, proposal.knob), "proposed": proposal.proposed,
            "why": proposal.why, "also_set": proposal.also_set}


def for_generation(findings: Findings) -> list[Proposal]:
    if findings.held_by == "inflight_cap":
        return more_in_flight(findings) or (one_more_version(findings) if cap_at_staleness_bound(findings) else [])
    if findings.held_by == "staleness":
        return one_more_version(findings)
    return faster_server(findings)


def more_in_flight(findings: Findings, reason: str = "") -> list[Proposal]:
    """Double the in-flight cap, up to the staleness bound and queue_maxsize (past them the cap
    cannot bind: cap_limit), or "auto"."""
    cap, bound = setting(findings.config, "max_inflight_tasks"), staleness_bound(findings.window, findings.config)
    limit = cap_limit(findings)
    if not isinstance(cap, int) or cap >= limit:
        return []
    held = held_phrase(findings)
    proposed = min(2 * cap, limit)
    within = (f"the staleness bound of {bound} groups ahead of the trainer" if limit == bound else
              f"queue_maxsize {limit} (the staleness bound allows {bound} groups ahead)")
    return [Proposal("max_inflight_tasks", proposed,
                     f"the in-flight cap of {cap} held submission back{held}{reason}; {proposed} stays "
                     f"within {within}"),
            Proposal("max_inflight_tasks", "auto",
                     "or let the trainer set the cap from the measured generation and training rates, within "
                     f"{within}")]


def cap_at_staleness_bound(findings: Findings) -> bool:
    """The cap reaches the staleness bound, which is then what limits (not queue_maxsize)."""
    return cap_limit(findings) == staleness_bound(findings.window, findings.config)


def one_more_version(findings: Findings) -> list[Proposal]:
    """The least max_staleness above the run's that lets more groups be ahead of the trainer."""
    config = findings.config
    staleness, bound = setting(config, "max_staleness"), staleness_bound(findings.window, config)
    proposed = next_staleness(config)
    more = ahead_bound({**config, "max_staleness": proposed}) - ahead_bound(config)
    if findings.held_by == "inflight_cap":  # the cap already reaches the bound: the bound is what limits
        held = f" (the in-flight cap reaches it and held submission back{held_phrase(findings)})"
    else:
        held = held_phrase(findings)
    older = "one weight version" if proposed == staleness + 1 else f"up to {proposed - staleness} weight versions"
    return [Proposal("max_staleness", proposed,
                     f"the staleness bound (max_staleness {staleness}: {bound} groups ahead of the trainer) held "
                     f"submission back{held}; {proposed} lets {more} more groups be "
                     f"generated ahead, at the cost of training on samples {older} older")]


def next_staleness(config: Mapping[str, Any]) -> int:
    """The bound is max(groups a step × weight_sync_steps × max_staleness, groups a step): from 0,
    one more grows it only where weight_sync_steps > 1; two more always does."""
    staleness = setting(config, "max_staleness")
    now = ahead_bound(config)
    return next((value for value in (staleness + 1, staleness + 2)
                 if ahead_bound({**config, "max_staleness": value}) > now), staleness + 2)


def faster_server(findings: Findings) -> list[Proposal]:
    """Neither bound held submission back: the server generates slower than the trainer trains."""
    rates = rates_phrase(findings)
    if findings.device == "gpu":
        engines = setting(findings.config, "vllm_data_parallel_size")
        tensor = setting(findings.config, "vllm_tensor_parallel_size")
        return [Proposal("vllm_data_parallel_size", engines + 1,
                         f"the server generates slower than the trainer trains{rates}; one more vLLM engine "
                         f"(on {tensor} more GPU{'s' if tensor > 1 else ''} the worker must have) generates "
                         "beside it, or give the server more of the worker's GPU split")]
    if findings.device == "cpu":
        return cores_for_generation(findings, rates)
    return []


def cores_for_generation(findings: Findings, rates: str) -> list[Proposal]:
    """On a CPU: give vLLM cores of its own (take_turns pauses it while a step trains; overlap
    loses both sides' time at thread barriers), or more of them."""
    mode = setting(findings.config, "cpu_sharing")
    if mode in ("take_turns", "overlap"):
        doing = "pauses vLLM while a step trains" if mode == "take_turns" else "runs both on the same cores"
        needs = cores_needed({**findings.config, "cpu_sharing": "split_cores"})
        return [Proposal("cpu_sharing", "split_cores",
                         f"the server generates slower than the trainer trains{rates}; {mode} {doing}: "
                         "split_cores gives vLLM cores of its own, so it generates while the trainer trains, "
                         f"on a machine with at least {needs} cores (vLLM's and one for the trainer)")]
    cores = setting(findings.config, "vllm_cpu_cores")
    if isinstance(cores, int):
        return [Proposal("vllm_cpu_cores", cores + 1,
                         f"the server generates slower than the trainer trains{rates}; split_cores gives vLLM "
                         f"{cores} cores: one more, on a machine with at least {cores + 2} cores (it must leave "
                         "the trainer at least one)")]
    return []


def for_scoring(findings: Findings) -> list[Proposal]:
    """A slow reward: more groups in flight are scored side by side only where the reward waits on
    the network (a judge: a thread per group in flight); a code reward scores two at a time."""
    if findings.held_by != "inflight_cap":
        return []
    return more_in_flight(findings, reason=" while scoring was slow: where the reward waits on the network "
                                           "(a judge), more groups in flight are scored side by side")[:1]


def for_training(findings: Findings) -> list[Proposal]:
    config, proposals = findings.config, []
    share = f"training took {findings.share('training'):.0%} of each step ({findings.seconds('training'):.1f} s)"
    if setting(config, "gradient_checkpointing"):
        proposals.append(Proposal("gradient_checkpointing", False,
                                  f"{share}; gradient checkpointing recomputes activations in the backward pass "
                                  "(about a third more compute): off, where the device's memory allows"))
    micro, accumulation = setting(config, "per_device_train_batch_size"), setting(config, "gradient_accumulation_steps")
    if accumulation % 2 == 0:
        proposals.append(Proposal(
            "per_device_train_batch_size", micro * 2,
            f"{share}; micro-batches of {micro * 2} with gradient_accumulation_steps {accumulation // 2} train the "
            f"same {micro * accumulation} completions a step in half as many passes, where the device's memory allows",
            also_set={"gradient_accumulation_steps": accumulation // 2}))
    return proposals


def for_weight_sync(findings: Findings) -> list[Proposal]:
    every = setting(findings.config, "weight_sync_steps")
    return [Proposal("weight_sync_steps", every + 1,
                     f"weight sync took {findings.share('weight_sync'):.0%} of each step "
                     f"({findings.seconds('weight_sync'):.1f} s a step, syncing every {every}); every {every + 1} "
                     "steps spends less time pushing weights, at the cost of rollouts generated with weights up to "
                     "one more step old")]


def for_evaluation(findings: Findings) -> list[Proposal]:
    every, examples = setting(findings.config, "eval_steps"), setting(findings.config, "eval_examples")
    spent = (f"the trainer waited for evaluations {findings.share('evaluation'):.0%} of each step "
             f"({findings.seconds('evaluation'):.1f} s a step)")
    return [Proposal("eval_steps", every * 2, f"{spent}; evaluating every {every * 2} steps instead of {every} "
                                              "halves it"),
            Proposal("eval_examples", max(1, examples // 2),
                     f"{spent}; {max(1, examples // 2)} examples instead of {examples} halves each evaluation "
                     "(a noisier pass@1)")]


def held_phrase(findings: Findings) -> str:
    """How much the bound held submission back: the share of polls it stopped, or for runs that
    did not log that, how full the in-flight cap ran."""
    share, fullness = findings.held_share(), findings.queue["fullness"]
    if share is not None:
        return f" {share:.0%} of the time"
    return f" (in flight at {fullness:.0%} of it)" if findings.held_by == "inflight_cap" and fullness else ""


def rates_phrase(findings: Findings) -> str:
    generation = findings.throughput["generation_tokens_per_s"]
    training = findings.throughput["training_tokens_per_s"]
    if generation is None or training is None:
        return ""
    return f" ({generation:.0f} tokens/s generated against {training:.0f} tokens/s trained)"


PROPOSERS: dict[str, Callable[[Findings], list[Proposal]]] = {
    "generation": for_generation, "scoring": for_scoring, "training": for_training,
    "weight_sync": for_weight_sync, "evaluation": for_evaluation,
}
