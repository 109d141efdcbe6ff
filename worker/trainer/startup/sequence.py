"""The order of start-up, and where its time went (the `setup/*` metrics).

Cheap refusals come first; vLLM (and the served judges' servers) are spawned before the policy
loads, so that both load at once; what needs the policy (a reward model's device) or the server
(rollouts) comes after it.
"""
import time

from worker.trainer.checkpoints.keeping import CheckpointKeeper
from worker.trainer.environments.loading import extra_reward_functions
from worker.trainer.processes.lifetime import process_age_s
from worker.trainer.rewards.loader import check_reward_specs
from worker.trainer.startup.checkpoints import refuse_paths, with_local_checkpoints
from worker.trainer.startup.datasets import load_datasets
from worker.trainer.startup.environment import set_up_environment
from worker.trainer.startup.evaluation import start_evaluator
from worker.trainer.startup.policy import load_policy
from worker.trainer.startup.ready import ReadyParts
from worker.trainer.startup.rewards import (
    api_keys, check_endpoint_judges, join_judges, load_rewards, spawn_judges, start_reward_sandbox,
)
from worker.trainer.startup.rollouts import prompt_source, staleness_policy, start_rollouts
from worker.trainer.startup.server import cpu_sharing, join_server, spawn_server
from worker.trainer.startup.starting_run import StartingRun
from worker.trainer.startup.weights import give_server_our_weights, needs_first_push, weight_sync_for


def start_up(run: StartingRun, checkpoints: CheckpointKeeper) -> ReadyParts:
    """Every part, started and registered with `run.lifecycle` as it starts: an error stops here
    and the lifecycle stops what had started. One function so that the order reads top to bottom."""
    # Python and library imports before this point are part of the start-up shown.
    process_s, started = process_age_s(), time.monotonic()
    refuse_paths(run.spec)
    check_reward_specs(run.spec.rewards + run.spec.eval_rewards)  # refused before anything loads
    run = with_local_checkpoints(run)
    sandbox = start_reward_sandbox(run)
    keys = api_keys(run)
    dataset, eval_dataset = load_datasets(run)
    # vLLM loads in its own process while this one loads the policy: start it first, and the
    # judges' server(s) with it.
    own_server = spawn_server(run)
    judges = spawn_judges(run)
    loading = time.monotonic()
    training, state = load_policy(run)
    loaded = time.monotonic()
    join_judges(run, judges)
    rewards = load_rewards(run, sandbox, judges, keys, device=str(training.accelerator.device))
    setup = set_up_environment(run, training.tokenizer, sandbox)
    if setup.environment is not None:
        rewards = rewards.with_extra(extra_reward_functions(setup.environment))
    server = join_server(run, own_server)
    sync = weight_sync_for(run, server, training.on_gpu)
    sharing, generation_pause = cpu_sharing(run, server, training.on_gpu)
    check_endpoint_judges(run, rewards.loader)
    prompts, frontier = prompt_source(run, dataset, state, training.tokenizer, setup)
    served_name = server.served_name
    if needs_first_push(run):
        sync, served_name = give_server_our_weights(run, server, sync, run.crew, training, state)
    staleness = staleness_policy(run)

    def current_version() -> int:
        return state.model_version

    rollout = start_rollouts(run, prompts, setup, server, served_name, rewards.training, staleness,
                             current_version, sharing)
    evaluator = start_evaluator(run, eval_dataset, training.tokenizer, setup, server, served_name,
                                rewards.evaluation or rewards.training, current_version)
    if evaluator is not None and state.step % run.config.eval_steps == 0:
        evaluator.start(state.step, state.model_version)  # the weights training starts from
    report_setup(run, state.step, process_s=process_s, load_s=loaded - loading,
                 inference_wait_s=time.monotonic() - loaded, setup_s=time.monotonic() - started)
    return ReadyParts(config=run.config, output_dir=run.output_dir, report=run.report, checkpoints=checkpoints,
                      crew=run.crew, state=state, frontier=frontier, training=training, rewards=rewards.training,
                      eval_rewards=rewards.evaluation, weight_sync=sync, rollout=rollout, staleness=staleness,
                      cpu_sharing=sharing, generation_pause=generation_pause, evaluator=evaluator,
                      served_judges=judges)


def report_setup(run: StartingRun, step: int, **seconds: float) -> None:
    """Where the time before the first step went, as metrics at the starting step: the
    run page shows them at once, long before the first training step ends."""
    run.report.metrics(step, {f"setup/{name}": round(value, 3) for name, value in seconds.items()}, send_now=True)
