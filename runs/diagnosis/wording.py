"""The diagnosis in one plain sentence: the bottleneck and the numbers that name it."""
from runs.diagnosis.findings import Findings
from runs.diagnosis.run_config import setting
from runs.diagnosis.suggestions import held_phrase, rates_phrase
from worker.trainer.metric_names import ASYNC_PAUSED_SHARE, ROLLOUT_GROUP_GENERATION_S, ROLLOUT_GROUP_SCORING_S

NAMES = {"waiting_for_rollouts": "waiting for rollouts", "training": "training", "weight_sync": "weight sync",
         "evaluation": "evaluation", "other": "the rest"}


def too_short_sentence(measured: int, needed: int) -> str:
    counted = "No steps" if measured == 0 else "1 step" if measured == 1 else f"{measured} steps"
    return f"{counted} measured; a diagnosis needs {needed} after the first."


def sentence_of(findings: Findings) -> str:
    return SENTENCES[findings.bottleneck](findings)


def of_step(findings: Findings, part: str) -> str:
    """"62% of each step (12.4 s of 20.0 s)"."""
    return (f"{findings.share(part):.0%} of each step ({findings.seconds(part):.1f} s of "
            f"{findings.split.step_seconds:.1f} s)")


def generation(findings: Findings) -> str:
    waited = ("Generation is the bottleneck: the trainer waited "
              f"{of_step(findings, 'waiting_for_rollouts')} for rollouts")
    if findings.held_by == "inflight_cap":
        return f"{waited} while the in-flight cap of {cap_words(findings)} held submission back{held_phrase(findings)}."
    if findings.held_by == "staleness":
        return (f"{waited} while the staleness bound (max_staleness {setting(findings.config, 'max_staleness')}) "
                f"held submission back{held_phrase(findings)}.")
    return (f"{waited}: the server generates slower than the trainer trains{rates_phrase(findings)}"
            f"{paused_phrase(findings)}{remedy(findings)}.")


def paused_phrase(findings: Findings) -> str:
    """Taking turns, generation stops while the trainer trains: said where that was much of the time."""
    paused = findings.window.mean(ASYNC_PAUSED_SHARE)
    return f", and it was paused for training {paused:.0%} of the time" if paused and paused >= 0.3 else ""


def cap_words(findings: Findings) -> str:
    cap = setting(findings.config, "max_inflight_tasks")
    if cap != "auto":
        return str(cap)
    mean = findings.queue["cap_mean"]
    return f"{mean:.0f} groups (auto)" if mean is not None else "auto"


def remedy(findings: Findings) -> str:
    """Where no knob of the config helps, what does: the worker's GPU split, vLLM's cores."""
    if findings.device == "gpu":
        return "; more vLLM engines or a larger share of the worker's GPUs for the server would help"
    if findings.device == "cpu":
        return "; more cores for vLLM (cpu_sharing split_cores, vllm_cpu_cores) would help"
    return ("; on GPUs more vLLM engines (vllm_data_parallel_size), on a CPU more cores for vLLM "
            "(cpu_sharing, vllm_cpu_cores) would help")


def scoring(findings: Findings) -> str:
    scoring_s = findings.window.mean(ROLLOUT_GROUP_SCORING_S) or 0.0
    generation_s = findings.window.mean(ROLLOUT_GROUP_GENERATION_S) or 0.0
    return (f"Scoring is the bottleneck: the trainer waited {of_step(findings, 'waiting_for_rollouts')} for rollouts, "
            f"and scoring a group took {scoring_s:.1f} s against {generation_s:.1f} s to generate it: the reward "
            "is slow.")


def training(findings: Findings) -> str:
    return (f"Training is the bottleneck: it took {of_step(findings, 'training')} while the trainer waited only "
            f"{findings.share('waiting_for_rollouts'):.0%} for rollouts.")


def weight_sync(findings: Findings) -> str:
    return f"Weight sync is the bottleneck: pushing weights to the server took {of_step(findings, 'weight_sync')}."


def evaluation(findings: Findings) -> str:
    return f"Evaluation is the bottleneck: the trainer waited for evaluations {of_step(findings, 'evaluation')}."


def balanced(findings: Findings) -> str:
    parts = [f"{NAMES[part]} {findings.share(part):.0%}" for part in findings.split.seconds
             if findings.seconds(part) > 0]  # never empty: a step with no time is unexplained
    listed = ", ".join(parts[:-1]) + f" and {parts[-1]}" if len(parts) > 1 else parts[0]
    return (f"Nothing dominates: of each {findings.split.step_seconds:.1f} s step, {listed}; no one change "
            "would shorten it much.")


def unexplained(findings: Findings) -> str:
    """No bottleneck named: the parts the trainer logged do not say where the step's time went."""
    step = findings.split.step_seconds
    if step <= 0:
        return "The steps measured logged no time: nothing to name."
    if not any(findings.seconds(part) > 0 for part in NAMES if part != "other"):
        return (f"The steps logged none of their parts (waiting for rollouts, training, weight sync, evaluation): "
                f"where each {step:.1f} s step goes is not known, so no bottleneck is named.")
    return (f"The logged parts do not explain the step time: {of_step(findings, 'other')} is outside waiting "
            "for rollouts, training, weight sync and evaluation, so no bottleneck is named.")


SENTENCES = {None: unexplained, "generation": generation, "scoring": scoring, "training": training,
             "weight_sync": weight_sync, "evaluation": evaluation, "balanced": balanced}
