"""A live control plane shared by two users, for the names-not-paths attacks: `first` has a run
whose checkpoint folder lies on the server's disk (RUNS_DIR/<run>/checkpoints/...); `second`, the
attacker, has a dataset, a reward and a run of their own with a checkpoint too. Each has an API token."""
import json

import httpx

from tests.support.asgi_server import AsgiServer

SEED_TWO_USERS = """
import json
from pathlib import Path
from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.authtoken.models import Token
from runs.models import Checkpoint, Dataset, RewardFunction, Run, RunReward
from worker.trainer.config import TrainingConfig

def user_with_a_run(name, model):
    user = get_user_model().objects.create_user(name, password=name + "-pass-123")
    dataset = Dataset.objects.create(owner=user, name="d", source="generator", generator="arithmetic", row_count=8)
    reward = RewardFunction.objects.create(owner=user, name="acc", kind="builtin", builtin="accuracy")
    run = Run.objects.create(owner=user, name=name + "-run", dataset=dataset,
                             config=TrainingConfig(model=model, max_steps=20).model_dump(), status="succeeded")
    RunReward.objects.create(run=run, reward_function=reward)
    folder = Path(settings.RUNS_DIR) / str(run.pk) / "checkpoints" / "step-0000010"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "owner": name}))
    checkpoint = Checkpoint.objects.create(run=run, step=10, path=str(folder), created_at=timezone.now())
    return {"user": user.pk, "token": Token.objects.create(user=user).key, "dataset": dataset.pk,
            "reward": reward.pk, "run": run.pk, "checkpoint": checkpoint.pk, "checkpoint_path": str(folder)}

print(json.dumps({"first": user_with_a_run("first", MODEL), "second": user_with_a_run("second", MODEL)}))
"""

STORED = """
import json
from runs.models import Checkpoint, Dataset, Run, TrainingConfig
print(json.dumps({"runs": list(Run.objects.order_by("pk").values("pk", "owner", "config", "status")),
                  "configs": list(TrainingConfig.objects.order_by("pk").values("pk", "values")),
                  "datasets": list(Dataset.objects.order_by("pk").values("pk", "hub_id", "source")),
                  "checkpoints": list(Checkpoint.objects.order_by("pk").values("pk", "run", "path"))}))
"""


def start(data_dir, model: str = "HuggingFaceTB/SmolLM2-135M-Instruct", env: dict | None = None) -> AsgiServer:
    server = AsgiServer(data_dir, env={"MODEL_DIRS": "", **(env or {})}).start()
    server.seed = server.shell_json(f"MODEL = {model!r}\n" + SEED_TWO_USERS)
    return server


def api(server: AsgiServer, user: str) -> httpx.Client:
    return httpx.Client(base_url=server.url, timeout=60,
                        headers={"Authorization": f"Token {server.seed[user]['token']}"})


def stored(server: AsgiServer) -> dict:
    """What the database holds of runs, configs, datasets and checkpoints: a refusal changes none of it."""
    return server.shell_json(STORED)


def run_payload(server: AsgiServer, user: str, **config) -> dict:
    seed = server.seed[user]
    return {"name": "attempt", "dataset": seed["dataset"], "rewards": [{"reward_function": seed["reward"]}],
            "config": config}


def trainer_outcome(tmp_path) -> dict:
    """The last status a trainer built by tests.support.trainers reported (to its local events file)."""
    lines = (tmp_path / "out" / "events" / "events-trainer-1.jsonl").read_text().splitlines()
    return [event for event in map(json.loads, lines) if event["type"] == "status"][-1]
