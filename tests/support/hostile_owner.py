"""A live control plane with one user who means harm, for the bounded-work attacks: an owner with an
API token, a generated dataset of 8 rows and the built-in calculator environment on it."""
import threading

import httpx

from tests.support.asgi_server import AsgiServer

SEED_OWNER = """
import json
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from runs.models import Dataset, Environment
owner = get_user_model().objects.create_user("owner", password="owner-pass-123")
dataset = Dataset.objects.create(owner=owner, name="arith", source="generator", generator="arithmetic",
                                 generator_params={"count": 8, "difficulty": 1, "seed": 0}, row_count=8)
calculator = Environment.objects.create(owner=owner, name="calc", kind="builtin", builtin="calculator",
                                        params={}, dataset=dataset)
print(json.dumps({"api_token": Token.objects.create(user=owner).key, "dataset": dataset.pk,
                  "calculator": calculator.pk}))
"""

STORED = """
import json
from runs.models import Dataset, Environment, RewardFunction
print(json.dumps({"datasets": list(Dataset.objects.order_by("pk").values("pk", "name", "row_count", "file")),
                  "environments": list(Environment.objects.order_by("pk").values("pk", "params")),
                  "rewards": list(RewardFunction.objects.order_by("pk").values("pk", "builtin", "params"))}))
"""


def start(data_dir, env: dict | None = None) -> AsgiServer:
    server = AsgiServer(data_dir, env=env).start()
    server.seed = server.shell_json(SEED_OWNER)
    return server


def api(server: AsgiServer) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Token {server.seed['api_token']}"},
                        timeout=120)


def stored(server: AsgiServer) -> dict:
    """What the database holds of datasets, environments and rewards: an attack must change none of it."""
    return server.shell_json(STORED)


class InFlight:
    """A request sent in a thread, so that the test can ask the server something else meanwhile."""

    def __init__(self, send):
        self.response = None
        self.thread = threading.Thread(target=self._run, args=(send,), daemon=True)
        self.thread.start()

    def _run(self, send):
        self.response = send()

    @property
    def finished(self) -> bool:
        return not self.thread.is_alive()

    def wait(self, timeout_s: float = 120):
        self.thread.join(timeout_s)
        return self.response
