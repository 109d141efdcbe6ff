"""Runs: made, started, cancelled, resumed, cloned; and what they reported (logs, metrics,
samples, alarms), and where their step time goes (diagnosis)."""
from typing import Any

from client.session import Json, Session

FINISHED = ("succeeded", "failed", "cancelled", "lost")


def weighted(rewards: list[int] | dict[int, float] | None) -> list[dict[str, Any]]:
    """Reward ids (weight 1 each) or {id: weight}, as the API's list of run rewards."""
    pairs = rewards.items() if isinstance(rewards, dict) else ((reward, 1.0) for reward in rewards or [])
    return [{"reward_function": reward, "weight": weight} for reward, weight in pairs]


LOG_PAGE = 1000  # the API's largest page of log lines


class RunCalls(Session):
    def runs(self, page: int = 1) -> Json:
        return self._call("GET", "runs/", params={"page": page})

    def run(self, run_id: int) -> Json:
        return self._call("GET", f"runs/{run_id}/")

    def create_run(self, name: str, dataset: int | None, rewards: list[int] | dict[int, float] | None,
                   config: dict[str, Any] | None = None, config_template: int | None = None,
                   eval_dataset: int | None = None, eval_rewards: list[int] | dict[int, float] | None = None,
                   environment: int | None = None) -> Json:
        """`rewards`: ids, or {id: weight}. `environment`: multi-turn rollouts in it (its dataset and rubric
        unless given). `eval_dataset`/`eval_rewards`: what evaluations run on and are judged by (config
        eval_steps); none: a held-out share of `dataset` (eval_holdout_fraction), judged by the training rewards."""
        body = {"name": name, "dataset": dataset, "rewards": weighted(rewards), "config": config or {},
                "config_template": config_template, "eval_dataset": eval_dataset,
                "eval_rewards": weighted(eval_rewards)}
        body.update({"environment": environment} if environment is not None else {})
        return self._call("POST", "runs/", json=body)

    def update_run(self, run_id: int, **fields: Any) -> Json:
        return self._call("PATCH", f"runs/{run_id}/", json=fields)

    def delete_run(self, run_id: int) -> None:
        """Refused (409) while the run is active: cancel it first."""
        self._call("DELETE", f"runs/{run_id}/")

    def start_run(self, run_id: int) -> Json:
        return self._call("POST", f"runs/{run_id}/start/")

    def cancel_run(self, run_id: int) -> Json:
        return self._call("POST", f"runs/{run_id}/cancel/")

    def resume_run(self, run_id: int, **machines: int) -> Json:
        """`machines`: trainer_machines, trainer_processes or inference_machines to resume on (a run
        over N machines resumed on M); none: as it ran."""
        return self._call("POST", f"runs/{run_id}/resume/", json=machines or None)

    def clone_run(self, run_id: int, name: str | None = None) -> Json:
        """A new run (created, not started) with the same dataset, rewards and settings."""
        return self._call("POST", f"runs/{run_id}/clone/", json={"name": name} if name else {})

    def logs(self, run_id: int, after: int = 0, level: str | None = None) -> list[Json]:
        """Up to LOG_PAGE lines after line id `after`: a full page means more may follow (ask
        again with the last line's id)."""
        params = {"after": after, "page_size": LOG_PAGE, **({"level": level} if level else {})}
        return self._call("GET", f"runs/{run_id}/logs/", params=params)["results"]

    def alarms(self, run_id: int) -> Json:
        """Every alarm the run raised, in step order."""
        return self._call("GET", f"runs/{run_id}/alarms/")

    def metrics(self, run_id: int, names: list[str] | None = None, max_points: int = 500,
                step_min: int | None = None, step_max: int | None = None) -> Json:
        """Each metric's series (step, value), downsampled to `max_points`; every metric when `names` is None."""
        params = {"names": ",".join(names or []), "max_points": max_points, "step_min": step_min,
                  "step_max": step_max}
        return self._call("GET", f"runs/{run_id}/metrics/", params=present(params))

    def last_metrics(self, run_id: int, names: list[str]) -> dict[str, float]:
        """The latest value of each named metric the run reported."""
        answer = self.metrics(run_id, names, max_points=10)
        return {name: series["value"][-1] for name, series in answer["series"].items() if series["value"]}

    def diagnosis(self, run_id: int) -> Json:
        """Where the recent steps' time goes, the bottleneck in a sentence, and knob changes that move
        it (status "too_short" until the run has enough steps): docs/capabilities/diagnosis.md."""
        return self._call("GET", f"runs/{run_id}/diagnosis/")

    def samples(self, run_id: int, step: int | None = None, end_reason: str | None = None, page: int = 1) -> Json:
        """The sampled completions the trainer logged (a page of them), at one `step` or all."""
        params = {"step": step, "end_reason": end_reason, "page": page}
        return self._call("GET", f"runs/{run_id}/samples/", params=present(params))

    def sample_steps(self, run_id: int, after: int | None = None) -> list[int]:
        """The steps that have sampled completions."""
        return self._call("GET", f"runs/{run_id}/sample-steps/", params=present({"after": after}))["steps"]


def present(params: dict[str, Any]) -> dict[str, Any]:
    """The query parameters that have a value (None: not sent)."""
    return {name: value for name, value in params.items() if value is not None}
