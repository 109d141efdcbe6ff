"""Environments (a dataset, how an episode goes, the rubric that scores it) and their dry runs."""
from typing import Any

from client.session import Json, Session


def rubric(rewards: dict[int, float]) -> list[dict[str, Any]]:
    """{reward function id: weight} as the API's rubric list."""
    return [{"reward_function": reward, "weight": weight} for reward, weight in rewards.items()]


class EnvironmentCalls(Session):
    def environments(self, page: int = 1) -> Json:
        return self._call("GET", "environments/", params={"page": page})

    def environment(self, environment_id: int) -> Json:
        return self._call("GET", f"environments/{environment_id}/")

    def create_environment(self, name: str, kind: str, dataset: int | None = None,
                           rewards: dict[int, float] | None = None, builtin: str = "",
                           params: dict[str, Any] | None = None, source: str = "", verifiers_id: str = "",
                           description: str = "") -> Json:
        """kind builtin (`builtin`, `params`), code (`source`) or verifiers (`verifiers_id`, `params`);
        builtin and code need a `dataset` and `rewards` ({reward function id: weight}) to score episodes."""
        body: dict[str, Any] = {"name": name, "kind": kind, "description": description, "dataset": dataset,
                                "rubric": rubric(rewards or {}), "params": params or {}}
        body.update({"builtin": builtin} if kind == "builtin" else {})
        body.update({"source": source} if kind == "code" else {})
        body.update({"verifiers_id": verifiers_id} if kind == "verifiers" else {})
        return self._call("POST", "environments/", json=body)

    def update_environment(self, environment_id: int, **fields: Any) -> Json:
        return self._call("PATCH", f"environments/{environment_id}/", json=fields)

    def delete_environment(self, environment_id: int) -> None:
        self._call("DELETE", f"environments/{environment_id}/")

    def dry_run_environment(self, environment_id: int, **asked: Any) -> Json:
        """One episode on dataset row `row`: typed assistant `turns` answer the episode at once; without
        them `model` plays, queued (`state`, `url`): follow it with environment_dry_run."""
        return self._call("POST", f"environments/{environment_id}/dry-run/", json=asked)

    def environment_dry_run(self, environment_id: int, dry_run_id: int) -> Json:
        return self._call("GET", f"environments/{environment_id}/dry-runs/{dry_run_id}/")
