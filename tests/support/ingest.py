"""Events sent to a run's ingest API (POST /api/runs/<id>/events/) the way a trainer sends them:
through the test client, or over HTTP to a live server (`Trainer`)."""
import itertools

import httpx

# Run in the live server's shell: a fresh ingest token for the run, as its worker would be given.
TOKEN = """
import json
from runs.models import Run
run = Run.objects.get(pk={run_id})
token = run.issue_ingest_token()
run.save()
print(json.dumps({{"token": token}}))
"""


def post_events(client, run, events, token=None, source="trainer"):
    return client.post(
        f"/api/runs/{run.pk}/events/", {"source": source, "events": events}, format="json",
        HTTP_AUTHORIZATION=f"Bearer {token if token is not None else run.test_token}",
    )


class Trainer:
    """Sends events to a run's ingest API the way worker/trainer/reporting does."""

    def __init__(self, server, run_id: int):
        self.url = f"{server.url}/api/runs/{run_id}/events/"
        self.token = server.shell_json(TOKEN.format(run_id=run_id))["token"]
        self.seq = itertools.count(1)

    def send(self, *events) -> dict:
        batch = [{"seq": next(self.seq), **event} for event in events]
        response = httpx.post(self.url, json={"source": "trainer", "events": batch},
                              headers={"Authorization": f"Bearer {self.token}"}, timeout=10)
        response.raise_for_status()
        return response.json()

    def status(self, status: str, message: str = ""):
        return self.send({"type": "status", "status": status, "message": message})

    def metrics(self, step: int, reward: float):
        return self.send({"type": "metrics", "step": step, "values": {
            "rollout/reward_mean": reward, "rollout/reward_std": 0.1, "rollout/reward/accuracy_mean": reward,
            "rollout/reward/accuracy_std": 0.2, "train/loss": 1.0 / step, "train/kl_to_sampler": 0.01,
            "system/step_time_s": 2.0, "train/grad_norm": 0.5}})

    def samples(self, step: int, completion: str, prompt: str = "What is 2 + 2?"):
        return self.send({"type": "samples", "step": step, "samples": [
            {"group": 0, "prompt": prompt, "completion": completion,
             "rewards": {"accuracy": 1.0, "format": 0.0}, "total_reward": 1.0, "advantage": 0.7,
             "model_version": step, "staleness": 1, "num_tokens": 4, "finish_reason": "stop"},
            {"group": 0, "prompt": prompt, "completion": "five\n" * 40,
             "rewards": {"accuracy": 0.0, "format": 0.0}, "total_reward": 0.0, "advantage": -0.7,
             "model_version": step, "staleness": 1, "num_tokens": 80, "finish_reason": "length"}]})

    def episodes(self, step: int, *records):
        return self.send({"type": "samples", "step": step, "samples": list(records)})

    def log(self, message: str, level: str = "info"):
        return self.send({"type": "log", "level": level, "message": message})

    def checkpoint(self, step: int, path: str):
        return self.send({"type": "checkpoint", "step": step, "path": path, "size_bytes": 2048, "model_version": step})
