"""A demo run: the user's demo library (runs/demos/library.py), then a run made from it and started,
all or nothing."""
from django.db import IntegrityError, transaction

from runs.configs.values import complete_config
from runs.demos.definitions import DEMOS, DemoDefinition
from runs.demos.library import demo_library
from runs.training_runs.lifecycle import start_run
from runs.training_runs.models import Run

# Each demo's runs are numbered under a name of their own; "Demo run N" as before for arithmetic.
RUN_NAMES = {"arithmetic": "Demo run", "tool-use": "Tool-use demo run"}


def _next_run_name(user, key: str) -> str:
    prefix = RUN_NAMES[key]
    return f"{prefix} {Run.objects.filter(owner=user, name__startswith=f'{prefix} ').count() + 1}"


def start_demo_run(user, key: str) -> Run:
    """Creates (or reuses) the demo's library, then creates and starts its run, all or nothing."""
    demo = DEMOS[key]
    for attempt in range(2):
        try:
            with transaction.atomic():
                return _create_and_start(user, demo)
        except IntegrityError:
            if attempt:  # a second click made the same library at the same moment; the retry finds it
                raise
    raise AssertionError("unreachable")


def _create_and_start(user, demo: DemoDefinition) -> Run:
    library = demo_library(user, demo.key)
    # A template found by name may predate knobs added since: completed again, as the API does.
    run = Run.objects.create(owner=user, name=_next_run_name(user, demo.key), dataset=library.dataset,
                             environment=library.environment, config_template=library.config,
                             config=complete_config(library.config.values))
    for reward, weight in library.rewards:
        run.run_rewards.create(reward_function=reward, weight=weight)
    by_name = {reward.name: reward for reward, _ in library.rewards}
    for name in demo.eval_rewards:
        run.run_eval_rewards.create(reward_function=by_name[name], weight=1.0)
    return start_run(run)
