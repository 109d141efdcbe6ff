"""The REST API as Python calls, thinly over httpx: what a script or a notebook automates.

    api = ControlPlane("http://127.0.0.1:8000", token="...")
    run = api.create_run(name="gsm8k", dataset=3, rewards=[1, 2], config={"max_steps": 60})
    api.start_run(run["id"])

The token is sent over plain http:// only to this machine (localhost, 127.0.0.0/8, ::1) unless
insecure=True: anyone on the network between could read it (client/credentials.py).

Every call returns the API's JSON as it is; an answer other than 2xx raises ApiError with the
server's words (one line per refused field), so a script fails with the reason, not a traceback
of the HTTP library.
"""
from pathlib import Path

import httpx

from client.credentials import check_url

FINISHED = ("succeeded", "failed", "cancelled", "lost")


class ApiError(Exception):
    def __init__(self, status: int, body):
        self.status, self.body = status, body
        super().__init__(f"HTTP {status}: {describe_problem(body)}")


def describe_problem(body) -> str:
    if isinstance(body, dict):
        parts = [str(body["detail"])] if "detail" in body else []
        parts += [f"{field}: {' '.join(map(str, messages)) if isinstance(messages, list) else messages}"
                  for field, messages in body.items() if field != "detail"]
        return "; ".join(parts) or "no reason given"
    return str(body)[:500]


class ControlPlane:
    def __init__(self, url: str, token: str, timeout_s: float = 30.0, transport: httpx.BaseTransport | None = None,
                 insecure: bool = False):
        check_url(url, insecure)  # raises CredentialsError before the token goes anywhere
        self.http = httpx.Client(base_url=url.rstrip("/") + "/api/", timeout=timeout_s, transport=transport,
                                 headers={"Authorization": f"Token {token}", "Accept": "application/json"})

    def close(self) -> None:
        self.http.close()

    # --- runs ------------------------------------------------------------------------
    def runs(self, page: int = 1) -> dict:
        return self._call("GET", "runs/", params={"page": page})

    def run(self, run_id: int) -> dict:
        return self._call("GET", f"runs/{run_id}/")

    def create_run(self, name: str, dataset: int, rewards: list[int], config: dict | None = None,
                   config_template: int | None = None, eval_dataset: int | None = None,
                   eval_rewards: list[int] | None = None) -> dict:
        """`eval_dataset`/`eval_rewards`: what evaluations run on and are judged by (config eval_steps);
        none: a held-out share of `dataset` (eval_holdout_fraction), judged by the training rewards."""
        body = {"name": name, "dataset": dataset, "rewards": [{"reward_function": r} for r in rewards],
                "config": config or {}, "config_template": config_template, "eval_dataset": eval_dataset,
                "eval_rewards": [{"reward_function": r} for r in eval_rewards or []]}
        return self._call("POST", "runs/", json=body)

    def start_run(self, run_id: int) -> dict:
        return self._call("POST", f"runs/{run_id}/start/")

    def cancel_run(self, run_id: int) -> dict:
        return self._call("POST", f"runs/{run_id}/cancel/")

    def resume_run(self, run_id: int) -> dict:
        return self._call("POST", f"runs/{run_id}/resume/")

    def logs(self, run_id: int, after: int = 0, level: str | None = None) -> list[dict]:
        params = {"after": after, "page_size": 1000, **({"level": level} if level else {})}
        return self._call("GET", f"runs/{run_id}/logs/", params=params)["results"]

    def alarms(self, run_id: int) -> list[dict]:
        """Every alarm the run raised, in step order."""
        return self._call("GET", f"runs/{run_id}/alarms/")

    def last_metrics(self, run_id: int, names: list[str]) -> dict[str, float]:
        """The latest value of each named metric the run reported."""
        answer = self._call("GET", f"runs/{run_id}/metrics/", params={"names": ",".join(names), "max_points": 10})
        return {name: series["value"][-1] for name, series in answer["series"].items() if series["value"]}

    # --- library ---------------------------------------------------------------------
    def datasets(self) -> dict:
        return self._call("GET", "datasets/")

    def upload_dataset(self, path: Path, name: str, prompt_column: str = "prompt") -> dict:
        with Path(path).open("rb") as handle:
            return self._call("POST", "datasets/", data={"name": name, "source": "upload",
                                                         "prompt_column": prompt_column},
                              files={"file": (Path(path).name, handle)}, timeout=None)

    def rewards(self, page: int = 1) -> dict:
        return self._call("GET", "reward-functions/", params={"page": page})

    def reward(self, reward_id: int) -> dict:
        return self._call("GET", f"reward-functions/{reward_id}/")

    def create_reward(self, name: str, kind: str, params: dict | None = None, builtin: str = "", source: str = "",
                      description: str = "", api_key: str | None = None) -> dict:
        """kind builtin (`builtin`, `params`), code (`source`), judge or reward_model (`params`: JudgeParams,
        RewardModelParams). `api_key`: an endpoint judge's (params.endpoint "url"); sent once, never answered."""
        body = {"name": name, "kind": kind, "description": description, "params": params or {}}
        body.update({"builtin": builtin} if kind == "builtin" else {})
        body.update({"source": source} if kind == "code" else {})
        body.update({"api_key": api_key} if api_key is not None else {})
        return self._call("POST", "reward-functions/", json=body)

    def update_reward(self, reward_id: int, **fields) -> dict:
        """Changes the fields given; `api_key=""` clears the stored key, leaving it out keeps it."""
        return self._call("PATCH", f"reward-functions/{reward_id}/", json=fields)

    def delete_reward(self, reward_id: int) -> None:
        self._call("DELETE", f"reward-functions/{reward_id}/")

    def _call(self, method: str, url: str, **kwargs):
        answer = self.http.request(method, url, **kwargs)
        try:
            body = answer.json()
        except ValueError:
            body = answer.text
        if not answer.is_success:
            raise ApiError(answer.status_code, body)
        return body
