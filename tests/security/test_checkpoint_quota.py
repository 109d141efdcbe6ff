"""A worker cannot fill the control plane's disk: a run's checkpoints have a quota
(RUN_CHECKPOINT_QUOTA_GB), and a chunk that would pass it is refused before it is written.

Against a live server with a 1 GiB quota, the run already holding a listed checkpoint of
1 GiB less 1000 bytes: a chunk of 999 bytes fits, the next one does not.
"""
import httpx
import pytest

from tests.support.asgi_server import SEED_RUN, AsgiServer

GIB = 1024 ** 3
LISTED = """
import json
from django.utils import timezone
from runs.models import Checkpoint
Checkpoint.objects.create(run_id={run_id}, step=10, path="/worker/step-10", size_bytes={size}, model_version=1,
                          created_at=timezone.now(), in_store=True)
print(json.dumps({{"ok": True}}))
"""
CHECKPOINTS = """
import json
from runs.models import Checkpoint
print(json.dumps(list(Checkpoint.objects.filter(run_id={run_id}).values_list("step", "size_bytes"))))
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with AsgiServer(tmp_path_factory.mktemp("server"), env={"RUN_CHECKPOINT_QUOTA_GB": "1"}) as running:
        running.seed = running.shell_json(SEED_RUN)
        running.shell_json(LISTED.format(run_id=running.seed["run_id"], size=GIB - 1000))
        yield running


def put_chunk(server, data, offset: int):
    url = f"{server.url}/api/runs/{server.seed['run_id']}/uploads/20/files/model.safetensors"
    return httpx.put(url, content=data, timeout=10, headers={
        "Authorization": f"Bearer {server.seed['token']}", "Upload-Offset": str(offset)})


def declare(server, size: int):
    url = f"{server.url}/api/runs/{server.seed['run_id']}/uploads/20/begin"
    return httpx.post(url, json={"files": [{"path": "model.safetensors", "size": size}]}, timeout=10,
                      headers={"Authorization": f"Bearer {server.seed['token']}"})


def test_a_chunk_past_the_runs_checkpoint_quota_is_refused_unwritten(server):
    assert declare(server, 999 + 4096).status_code == 200
    assert put_chunk(server, b"w" * 999, 0).json() == {"received": 999}  # up to the quota: taken

    refused = put_chunk(server, b"w" * 4096, 999)
    assert refused.status_code == 507
    assert refused.json()["detail"] == ("this run's checkpoints hold 1.00 GiB of its 1.00 GiB quota (RUN_CHECKPOINT"
                                        "_QUOTA_GB); 4096 more bytes would pass it, so none were written")

    got = httpx.get(f"{server.url}/api/runs/{server.seed['run_id']}/uploads/20/files/model.safetensors",
                    headers={"Authorization": f"Bearer {server.seed['token']}"}, timeout=10)
    assert got.json() == {"received": 999}
    assert server.shell_json(CHECKPOINTS.format(run_id=server.seed["run_id"])) == [[10, GIB - 1000]]
