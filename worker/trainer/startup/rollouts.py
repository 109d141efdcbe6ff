"""The rollout worker: prompts in the run's seeded order, sampled against the server and
scored in the background while the loop trains."""
from collections.abc import Callable

from worker.trainer.checkpoints.saving import TrainerState
from worker.trainer.config import TrainingConfig
from worker.trainer.data.loading import render_prompt, reward_columns
from worker.trainer.data.order import ConsumedFrontier, PromptOrder
from worker.trainer.environments.episodes import EpisodeSampler
from worker.trainer.inference.completions_client import CompletionsClient, sampling_params
from worker.trainer.inference.spread_client import SpreadClient
from worker.trainer.rollout.groups import task_prompt_text
from worker.trainer.rollout.inflight_control import cap_bounds, starting_cap
from worker.trainer.rollout.scoring import RewardFunction, Scorer
from worker.trainer.rollout.staleness import StalenessPolicy
from worker.trainer.rollout.worker import PromptSource, RolloutWorker, scoring_threads
from worker.trainer.startup.environment import EnvironmentSetup
from worker.trainer.startup.server import ServerConnection
from worker.trainer.startup.starting_run import StartingRun


def prompt_source(run: StartingRun, dataset, state: TrainerState, tokenizer,
                  setup: EnvironmentSetup) -> tuple[PromptSource, ConsumedFrontier]:
    """The prompts from the state's data position on, and the frontier of those consumed, which
    a checkpoint saves as the position to resume from."""
    order = PromptOrder(len(dataset), run.config.seed, position=state.data_position)
    prompt_column, max_length = run.spec.dataset.prompt_column, run.config.max_prompt_length

    def next_prompt():
        position = order.position
        row = dataset[order.next()]
        columns = reward_columns(row, prompt_column)
        task_prompt = task_prompt_text(row[prompt_column])  # what a judge reads as {prompt}
        if setup.environment is None:
            text = render_prompt(row[prompt_column], tokenizer)
        else:  # the episode's first messages travel with the row (environments/episodes.py)
            columns["prompt"] = setup.environment.start(dict(row), row[prompt_column])
            text = setup.rendering.text(columns["prompt"], generation_prompt=True)
        ids = tokenizer(text, add_special_tokens=False).input_ids[-max_length:]
        return position, text, ids, columns, task_prompt

    return PromptSource(next_prompt), ConsumedFrontier(state.data_position)


def staleness_policy(run: StartingRun) -> StalenessPolicy:
    config = run.config
    groups_per_step = config.completions_per_step // config.num_generations
    return StalenessPolicy(config.max_staleness, groups_per_step, config.weight_sync_steps)


def inflight_cap_at_start(config: TrainingConfig, staleness: StalenessPolicy, wave: int) -> tuple[int, int]:
    """(the worker's first in-flight cap, the most groups it can ever have in flight): a fixed
    max_inflight_tasks, or auto's starting cap and ceiling (rollout/inflight_control.py)."""
    if isinstance(config.max_inflight_tasks, int):
        return config.max_inflight_tasks, min(config.max_inflight_tasks, config.queue_maxsize, staleness.useful_ahead)
    floor, ceiling = cap_bounds(staleness.useful_ahead, config.queue_maxsize, wave)
    return starting_cap(staleness.groups_per_step, floor, ceiling), ceiling


def start_rollouts(run: StartingRun, prompts: PromptSource, setup: EnvironmentSetup, server: ServerConnection,
                   served_name: str, rewards: list[RewardFunction], staleness: StalenessPolicy,
                   current_version: Callable[[], int], cpu_sharing: str) -> RolloutWorker:
    """`served_name`: the model (or a LoRA run's adapter) the requests name."""
    config = run.config
    clients = [CompletionsClient(url, served_name, sampling_params(config), timeout_s=config.vllm_request_timeout_s,
                                 api_key=server.api_key) for url in server.urls]
    client = clients[0] if len(clients) == 1 else SpreadClient(clients)
    # With an environment, a group is G episodes played against the same client.
    sampler = (client if setup.environment is None
               else EpisodeSampler(client, setup.episode_runner(run, current_version)))
    scorer = Scorer(rewards, on_error=lambda name, message: run.warn(
        f"reward {name!r} failed for a group, its rewards are None: {message}"))
    # One core decodes a wave of sequences faster than a trickle.
    wave = staleness.half_ahead if cpu_sharing == "split_cores" else 1
    max_inflight, most_in_flight = inflight_cap_at_start(config, staleness, wave)
    judged = any(function.pass_threshold is not None for function in rewards)
    rollout = RolloutWorker(sampler, prompts, scorer, staleness, config.num_generations, max_inflight,
                            config.queue_maxsize, current_version=current_version, wave=wave,
                            scoring_threads=scoring_threads(judged, most_in_flight))
    run.lifecycle.started(rollout, rollout.stop)
    return rollout.start()
