"""A run's rewards are told apart by name: their metrics (`rollout/reward/<name>_mean`), the
samples' scores, the evaluation's columns and the judges' API keys (fetched by name from
/api/runs/<id>/secrets/) are all keyed by it. Two different reward functions of one name in a
run (a staff member's run may use several users' rewards) would mix their charts and could send
one judge's key to the other's endpoint, so such a run is refused, naming them."""
from collections.abc import Iterable

from runs.rewards.models.function import RewardFunction


def shared_name_problem(rewards: Iterable[RewardFunction]) -> str | None:
    """Why these rewards (training and evaluation together) cannot run side by side, or None."""
    ids_by_name: dict[str, set[int]] = {}
    for reward in rewards:
        ids_by_name.setdefault(reward.name, set()).add(reward.pk)
    clashes = [f"{name!r} (ids {', '.join(map(str, sorted(ids)))})"
               for name, ids in ids_by_name.items() if len(ids) > 1]
    if not clashes:
        return None
    return (f"different reward functions share a name: {'; '.join(clashes)}. A run keys its rewards' metrics, "
            "samples and API keys by name: rename one, or use one of them")
