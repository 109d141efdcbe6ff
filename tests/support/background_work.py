"""A live control plane with a real consumer of its queue, a tiny model prepared under its
MODELS_DIR, and an owner with a dataset, a reward and a built-in environment; shared by the tests
that take tests/runs/background/conftest.py's `live` (a server, a consumer and torch in it take seconds to start)."""
import time

import httpx

from tests.support.asgi_server import AsgiServer, logged_in_client

SEED = """
import json
from django.contrib.auth import get_user_model
from runs.models import Dataset, Environment, EnvironmentReward, RewardFunction
owner = get_user_model().objects.create_user("owner", password="owner-pass-123")
dataset = Dataset.objects.create(owner=owner, name="arith", source="generator", generator="arithmetic",
                                 generator_params={"count": 10, "difficulty": 1, "seed": 0},
                                 columns=["prompt", "answer"], row_count=10)
checking = Dataset.objects.create(owner=owner, name="still checking", source="upload", state="checking",
                                  check_progress={"rows": 1000, "bytes": 1, "total_bytes": 9})
reward = RewardFunction.objects.create(owner=owner, name="acc", kind="builtin", builtin="accuracy")
env = Environment.objects.create(owner=owner, name="feedback", kind="builtin", builtin="feedback", dataset=dataset,
                                 params={"turn_penalty": 0.0, "answer_column": "answer"})
EnvironmentReward.objects.create(environment=env, reward_function=reward, weight=1.0)
print(json.dumps({"environment": env.pk, "dataset": dataset.pk, "checking": checking.pk, "reward": reward.pk}))
"""


def owner_client(server: AsgiServer) -> httpx.Client:
    client = logged_in_client(server, "owner", "owner-pass-123")
    client.headers.update({"X-CSRFToken": client.cookies["csrftoken"], "Accept": "application/json"})
    return client


def polled(client: httpx.Client, url: str, until, timeout_s: float = 180.0) -> list[dict]:
    """Each different answer of GET `url` until `until(answer)`; TimeoutError past timeout_s."""
    seen, deadline = [], time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        answer = client.get(url).json()
        if not seen or answer != seen[-1]:
            seen.append(answer)
        if until(answer):
            return seen
        time.sleep(0.25)
    raise TimeoutError(f"{url} still {seen[-1] if seen else None} after {timeout_s} s")


def process_tree(pid: int) -> list[int]:
    """`pid` and its descendants, from /proc (a prefork consumer plays in a child)."""
    tree, index = [pid], 0
    while index < len(tree):
        try:
            with open(f"/proc/{tree[index]}/task/{tree[index]}/children") as children:
                tree += [int(child) for child in children.read().split()]
        except FileNotFoundError:
            pass
        index += 1
    return tree


def maps_libtorch(pid: int) -> bool:
    """Whether the process has torch's shared library mapped: it imported torch."""
    try:
        with open(f"/proc/{pid}/maps") as maps:
            return "libtorch" in maps.read()
    except FileNotFoundError:
        return False
