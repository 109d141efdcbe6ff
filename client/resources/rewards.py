"""Reward functions (built-ins, code, judges, reward models) and their dry runs."""
from typing import Any

from client.session import Json, Session


class RewardCalls(Session):
    def rewards(self, page: int = 1) -> Json:
        return self._call("GET", "reward-functions/", params={"page": page})

    def reward(self, reward_id: int) -> Json:
        return self._call("GET", f"reward-functions/{reward_id}/")

    def create_reward(self, name: str, kind: str, params: dict[str, Any] | None = None, builtin: str = "",
                      source: str = "", description: str = "", api_key: str | None = None) -> Json:
        """kind builtin (`builtin`, `params`), code (`source`), judge or reward_model (`params`: JudgeParams,
        RewardModelParams). `api_key`: an endpoint judge's (params.endpoint "url"); sent once, never answered."""
        body: dict[str, Any] = {"name": name, "kind": kind, "description": description, "params": params or {}}
        body.update({"builtin": builtin} if kind == "builtin" else {})
        body.update({"source": source} if kind == "code" else {})
        body.update({"api_key": api_key} if api_key is not None else {})
        return self._call("POST", "reward-functions/", json=body)

    def update_reward(self, reward_id: int, **fields: Any) -> Json:
        """Changes the fields given; `api_key=""` clears the stored key, leaving it out keeps it."""
        return self._call("PATCH", f"reward-functions/{reward_id}/", json=fields)

    def delete_reward(self, reward_id: int) -> None:
        self._call("DELETE", f"reward-functions/{reward_id}/")

    def dry_run_reward(self, reward_id: int, **asked: Any) -> Json:
        """Scores `completions` (one entry per row) for the first `rows` of `dataset`, or a `run`'s samples at
        `step`. A built-in or code answers the scores; a judge or reward model answers its queued dry run
        (`state`, `url`): follow it with reward_dry_run."""
        return self._call("POST", f"reward-functions/{reward_id}/dry-run/", json=asked)

    def reward_dry_run(self, reward_id: int, dry_run_id: int) -> Json:
        return self._call("GET", f"reward-functions/{reward_id}/dry-runs/{dry_run_id}/")
