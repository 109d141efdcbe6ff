"""A verifiers rubric as rubric functions of the run: one RewardFunction for each function of
env.rubric (a RubricGroup's too), with its weight; weight-0 metrics (num_turns, a ToolEnv's call
counts) are charted and add nothing.

Each is scored on the states the episodes kept (EpisodeRecord.environment_state) by verifiers'
own calls: a function of one rollout on each state, a group function (plural parameters:
completions, states, ...) on the group's states at once. verifiers scores a function that raises
0.0 and logs it, as in its own rollouts.
"""
import asyncio

from worker.trainer.rollout.scoring import RewardFunction


def rubric_functions(rubric, run) -> list[RewardFunction]:
    """`run`: runs a verifiers coroutine on the environment's loop (VerifiersEnvironment.run)."""
    return [RewardFunction(getattr(function, "__name__", repr(function)), weight, _scored_by(owner, function, run),
                           reads_environment_states=True)
            for owner, function, weight in _functions(rubric)]


def _functions(rubric):
    """(the rubric that holds it, function, weight), in order, through RubricGroups."""
    import verifiers as vf

    if isinstance(rubric, vf.RubricGroup):
        for part in rubric.rubrics:
            yield from _functions(part)
        return
    yield from ((rubric, function, weight) for function, weight in zip(rubric.funcs, rubric.weights))


def _scored_by(rubric, function, run):
    def reward(prompts, completions, environment_states=None, **columns):
        states = list(environment_states or [None] * len(completions))
        present = [i for i, state in enumerate(states) if state is not None]  # a failed episode kept none
        values = run(_score(rubric, function, [states[i] for i in present])) if present else []
        scored: list[float | None] = [None] * len(completions)
        for i, value in zip(present, values):
            scored[i] = float(value)
        return scored
    return reward


async def _score(rubric, function, states: list) -> list:
    if rubric._is_group_func(function):
        return list(await rubric._call_group_reward_func(function, states))
    return list(await asyncio.gather(*(rubric._call_individual_reward_func(function, state) for state in states)))
