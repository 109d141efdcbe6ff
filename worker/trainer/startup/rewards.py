"""The rewards' start-up: the sandbox for user code, the endpoint judges' keys, the served
judges' vLLM servers, then the reward functions, training's and evaluation's."""
import time
from dataclasses import dataclass

from worker.trainer.rewards.judges.keys import fetch_api_keys
from worker.trainer.rewards.judges.served import ServedJudges
from worker.trainer.rewards.loader import RewardLoader, needs_sandbox, served_judge_specs
from worker.trainer.rewards.sandbox.pool import SandboxPool
from worker.trainer.rollout.scoring import RewardFunction
from worker.trainer.startup.starting_run import StartingRun


@dataclass(frozen=True)
class Rewards:
    training: list[RewardFunction]
    evaluation: list[RewardFunction]  # empty: the evaluation scores with `training`
    loader: RewardLoader  # owns the judges and reward models it built, and checks the endpoint ones

    def with_extra(self, extra: list[RewardFunction]) -> "Rewards":
        """An environment's own rewards join training's (environments/loading.py)."""
        return Rewards(self.training + extra, self.evaluation, self.loader)


def start_reward_sandbox(run: StartingRun) -> SandboxPool | None:
    """None: no code reward and no code environment, nothing to confine."""
    spec = run.spec
    code_environment = spec.environment is not None and spec.environment.kind == "code"
    if not needs_sandbox(spec.rewards + spec.eval_rewards) and not code_environment:
        return None
    # One process per scoring thread (the rollout worker scores two groups at a time).
    pool = SandboxPool(size=2)
    run.lifecycle.started(pool, pool.close)
    pool.warm_up()
    run.report.log(f"reward sandbox ready: {pool.size} processes, confinement: {pool.confinement}")
    return pool


def api_keys(run: StartingRun) -> dict[str, str]:
    """The endpoint judges' keys, from the control plane with the run's token (judges/keys.py);
    a key missing fails the run here. The log names the rewards, never a key."""
    keys = fetch_api_keys(run.spec.rewards + run.spec.eval_rewards, run.spec.secrets_url, run.token,
                          on_wait=run.warn)
    if keys:
        run.report.log(f"API keys fetched for reward(s) {', '.join(map(repr, keys))}")
    return keys


def spawn_judges(run: StartingRun) -> ServedJudges | None:
    """One vLLM server per model the served judges name (judges/served.py), started beside the
    policy's, on the judges' GPUs of the worker's split (the CPU here). None: no served judge."""
    specs = served_judge_specs(run.spec.rewards + run.spec.eval_rewards)
    if not specs:
        return None
    logs = run.output_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    judges = ServedJudges(specs, run.config, logs, gpu_ids=run.spec.judge_gpu_ids)
    run.lifecycle.started(judges, judges.stop)
    return judges.start()


def join_judges(run: StartingRun, judges: ServedJudges | None) -> None:
    """Waits for the judges' server(s); one that does not start fails the run as the policy's would."""
    if judges is None:
        return
    started = time.monotonic()
    judges.join()
    run.report.log(f"served judges ready ({time.monotonic() - started:.1f} s waited after the policy loaded)")


def load_rewards(run: StartingRun, sandbox: SandboxPool | None, judges: ServedJudges | None,
                 keys: dict[str, str], device: str) -> Rewards:
    """Training and evaluation rewards; a reward in both is built once (one judge, one cache).
    A reward model runs on the policy's `device`: the CPU here, the trainer's GPU on GPUs."""
    loader = RewardLoader(sandbox, api_keys=keys, served=judges, device=device,
                          # an unreadable answer (with its raw text), a timeout: the run's log
                          on_warning=run.warn)
    run.lifecycle.started(loader, loader.close)
    return Rewards(loader.load(run.spec.rewards), loader.load(run.spec.eval_rewards), loader)


def check_endpoint_judges(run: StartingRun, loader: RewardLoader) -> None:
    """One tiny call to each judge at a URL: an endpoint refusing its key (or not knowing the
    model) fails the run now, with its answer, instead of giving None for every completion."""
    judges = loader.endpoint_judges()
    for judge in judges:
        judge.check()
    if judges:
        run.report.log(f"judge endpoint(s) answered: {', '.join(repr(judge.name) for judge in judges)}")
