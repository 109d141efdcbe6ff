"""One run driven through the REST API as its owner would: start, cancel, resume, and polling
until it reaches a state. Shared by the end-to-end tests that run a whole product."""
import time

from tests.support.asgi_server import AsgiServer, logged_in_client

OWNER = ("owner", "owner-pass-123")  # the user tests/support/seeds.py creates


class ApiRun:
    def __init__(self, server: AsgiServer, run_id: int):
        self.server, self.run_id = server, run_id
        self.login()

    def login(self) -> None:
        self.owner = logged_in_client(self.server, *OWNER)

    def post(self, verb: str, body: dict | None = None) -> None:
        response = self.owner.post(f"/api/runs/{self.run_id}/{verb}/", json=body,
                                   headers={"X-CSRFToken": self.owner.cookies["csrftoken"]})
        assert response.status_code == 200, response.text

    def get(self, path: str = "", **params) -> dict:
        return self.owner.get(f"/api/runs/{self.run_id}/{path}", params=params).json()

    def wait_for(self, predicate, what: str = "condition", timeout_s: float = 300) -> dict:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            run = self.get()
            if predicate(run):
                return run
            time.sleep(0.5)
        raise AssertionError(f"run {self.run_id} never reached {what}: it is {run['status']} at step "
                             f"{run['current_step']}: {run['error_message']}")

    def wait_training(self, step: int = 1) -> dict:
        return self.wait_for(lambda r: r["status"] == "running" and r["current_step"] >= step and
                             self.get("checkpoints/"), what=f"running past step {step} with a checkpoint")

    def trained_steps(self) -> list[int]:
        return self.get("metrics/", names="train/loss")["series"]["train/loss"]["step"]

    def logs(self) -> list[dict]:
        return self.get("logs/", page_size=1000)["results"]

    def wait_for_log(self, predicate, what: str, timeout_s: float = 30) -> dict:
        """The first log line `predicate` takes. Two processes may report one failure: the run's
        status can be the other's, stored a flush before this line."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = next((line for line in self.logs() if predicate(line)), None)
            if found is not None:
                return found
            time.sleep(0.5)
        raise AssertionError(f"run {self.run_id} never logged {what}: its last lines are "
                             f"{[line['message'][:200] for line in self.logs()[-10:]]}")
