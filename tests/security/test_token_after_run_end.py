"""A run's token opens nothing once the run has ended and its final flush window has passed.

Against a live server with RUN_TOKEN_GRACE_S=0: the worker reports the run's end with its
token, then the same token (left on a worker's disk, say) tries every route a token opens.
Each is refused with a 401 that says why, and nothing stored changes.
"""
import httpx
import pytest

from tests.support.asgi_server import AsgiServer

SEED_QUEUED_RUN = """
import json
from django.contrib.auth import get_user_model
from runs.models import Dataset, Run
from worker.trainer.config import TrainingConfig
owner, _ = get_user_model().objects.get_or_create(username="owner")
dataset, _ = Dataset.objects.get_or_create(owner=owner, name="d", source="generator", generator="arithmetic",
                                           row_count=1)
run = Run.objects.create(owner=owner, name="ends", dataset=dataset, config=TrainingConfig().model_dump())
run.enqueue()
token = run.issue_ingest_token()
run.save()
print(json.dumps({"run_id": run.pk, "token": token}))
"""
STORED = """
import json
from runs.models import Run
run = Run.objects.get(pk={run_id})
print(json.dumps({{"status": run.status, "logs": run.log_lines.count(), "checkpoints": run.checkpoints.count(),
                   "cursor": list(run.event_cursors.values_list("last_seq", flat=True))}}))
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("server")
    with AsgiServer(data_dir, env={"RUN_TOKEN_GRACE_S": "0"}) as running:
        running.data_dir = data_dir
        yield running


def post_events(server, run_id, token, events):
    return httpx.post(f"{server.url}/api/runs/{run_id}/events/", json={"source": "trainer", "events": events},
                      headers={"Authorization": f"Bearer {token}"}, timeout=10)


def token_routes(run_id):
    """Every route a run's token opens, with a body where it takes one."""
    uploads = f"/api/runs/{run_id}/uploads/30"
    return [
        ("POST", f"/api/runs/{run_id}/events/",
         {"json": {"source": "trainer", "events": [{"seq": 9, "type": "log", "message": "late"}]}}),
        ("POST", f"{uploads}/begin", {"json": {"files": [{"path": "model.safetensors", "size": 7}]}}),
        ("PUT", f"{uploads}/files/model.safetensors", {"content": b"weights", "headers": {"Upload-Offset": "0"}}),
        ("GET", f"{uploads}/files/model.safetensors", {}),
        ("POST", f"{uploads}/complete", {"json": {"step": 30, "model_version": 1, "local_path": "/x", "files": []}}),
        ("GET", f"{uploads}/", {}),
        ("GET", f"{uploads}/archive", {}),
        ("GET", f"/api/runs/{run_id}/dataset/", {}),
    ]


@pytest.mark.parametrize("end", ["succeeded", "failed", "cancelled"])
def test_the_token_of_an_ended_run_is_refused_after_the_grace(server, end):
    seed = server.shell_json(SEED_QUEUED_RUN)
    run_id, token = seed["run_id"], seed["token"]
    ended = post_events(server, run_id, token, [{"seq": 1, "type": "status", "status": "starting"},
                                                {"seq": 2, "type": "status", "status": "running"},
                                                {"seq": 3, "type": "status", "status": end, "message": "done"}])
    assert ended.status_code == 200, ended.text
    before = server.shell_json(STORED.format(run_id=run_id))

    for method, path, extra in token_routes(run_id):
        headers = {"Authorization": f"Bearer {token}", **extra.pop("headers", {})}
        answer = httpx.request(method, server.url + path, headers=headers, timeout=10, **extra)
        assert answer.status_code == 401, (method, path, answer.text)
        assert answer.json()["detail"].startswith(f"run {run_id} {end} at ")
        assert "RUN_TOKEN_GRACE_S=0 s after that and is no longer valid" in answer.json()["detail"]

    assert (before["status"], before["checkpoints"], before["cursor"]) == (end, 0, [3])
    assert server.shell_json(STORED.format(run_id=run_id)) == before
    artifacts = server.data_dir / "artifacts"
    assert not (artifacts.exists() and any(p.is_file() for p in artifacts.rglob("*")))
