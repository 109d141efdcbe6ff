"""The evaluator, which scores the server's weights on held-out examples beside training."""
from collections.abc import Callable

from worker.trainer.evaluation.eval_set import eval_examples
from worker.trainer.evaluation.evaluator import Evaluator
from worker.trainer.rollout.scoring import RewardFunction, Scorer
from worker.trainer.startup.environment import EnvironmentSetup
from worker.trainer.startup.server import ServerConnection
from worker.trainer.startup.starting_run import StartingRun


def start_evaluator(run: StartingRun, eval_dataset, tokenizer, setup: EnvironmentSetup, server: ServerConnection,
                    served_name: str, rewards: list[RewardFunction],
                    current_version: Callable[[], int]) -> Evaluator | None:
    """None: the run does not evaluate (no evaluation rows). `rewards`: evaluation's own, else training's."""
    if eval_dataset is None:
        return None
    config = run.config
    spec = run.spec.eval_dataset or run.spec.dataset
    examples = eval_examples(eval_dataset, spec.prompt_column, config.eval_examples, tokenizer,
                             config.max_prompt_length, setup.environment, setup.rendering)
    scorer = Scorer(rewards, on_error=lambda name, message: run.warn(
        f"evaluation reward {name!r} failed, its values are None: {message}"))
    evaluator = Evaluator(examples, scorer, config, run.report, server.url, served_name=lambda: served_name,
                          episodes=setup.episode_runner(run, current_version) if setup.environment else None,
                          api_key=server.api_key)
    run.lifecycle.started(evaluator, evaluator.stop)
    return evaluator
