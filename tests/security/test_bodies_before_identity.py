"""Bytes only after identity: a big body is refused before it is read, against a live server.

Each attack announces 2 GB and sends 16 KiB: an answer that comes was given without the body
(Django alone reads every byte before a view runs, and would wait for the rest). A body sent
without a length is cut off as it passes the route's limit. Nothing is stored either way, and
the server's temporary folder (where Django spools bodies) stays empty.
"""
import json

import httpx
import pytest

from tests.support.raw_http import announce_and_send_little, stream_until_answered
from tests.support.streamed_uploads import API_TOKEN
from tests.support.asgi_server import SEED_RUN, AsgiServer

TWO_GB = 2 * 1024 ** 3
CHUNK_LIMIT_MB = 8


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("server")
    (data_dir / "tmp").mkdir()
    env = {"TMPDIR": str(data_dir / "tmp"), "CHECKPOINT_CHUNK_MAX_MB": str(CHUNK_LIMIT_MB)}
    with AsgiServer(data_dir, env=env) as running:
        running.seed = running.shell_json(SEED_RUN)
        running.api_token = running.shell_json(API_TOKEN)["key"]
        running.data_dir = data_dir
        yield running


def upload_path(server, step=10) -> str:
    return f"/api/runs/{server.seed['run_id']}/uploads/{step}/files/model.safetensors"


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def stored_nothing(server) -> bool:
    """No checkpoint bytes under the artifacts folder, no spooled body in the temporary folder."""
    artifacts = server.data_dir / "artifacts"
    spooled = [p for p in (server.data_dir / "tmp").rglob("*") if p.is_file()]
    return not spooled and not (artifacts.exists() and any(p.is_file() for p in artifacts.rglob("*")))


def received(server, step=10) -> int:
    answer = httpx.get(server.url + upload_path(server, step), headers=bearer(server.seed["token"]), timeout=10)
    return answer.json()["received"]


ATTACKS = {
    # (what is sent, to where) -> (status, words of the refusal)
    "checkpoint chunk, no token": (
        lambda s: ("PUT", upload_path(s), {"Upload-Offset": "0"}),
        401, "send the run's ingest token as 'Authorization: Bearer <token>'"),
    "checkpoint chunk, another token": (
        lambda s: ("PUT", upload_path(s), {"Upload-Offset": "0", **bearer("not-the-runs-token")}),
        404, "no run with this id for this token"),
    "checkpoint chunk, the run's token, 2 GB": (
        lambda s: ("PUT", upload_path(s), {"Upload-Offset": "0", **bearer(s.seed["token"])}),
        413, f"this route takes at most {CHUNK_LIMIT_MB}.0 MiB (CHECKPOINT_CHUNK_MAX_MB)"),
    "event batch, no token": (
        lambda s: ("POST", f"/api/runs/{s.seed['run_id']}/events/", {"Content-Type": "application/json"}),
        401, "send the run's ingest token"),
    "event batch, another token": (
        lambda s: ("POST", f"/api/runs/{s.seed['run_id']}/events/", bearer("not-the-runs-token")),
        401, "this token is not valid for this run"),
    "event batch, the run's token, 2 GB": (
        lambda s: ("POST", f"/api/runs/{s.seed['run_id']}/events/", bearer(s.seed["token"])),
        413, "(INGEST_BATCH_MAX_MB)"),
    "dataset upload, anonymous": (
        lambda s: ("POST", "/api/datasets/", {"Content-Type": "multipart/form-data; boundary=x"}),
        401, "Authentication credentials were not provided."),
    "dataset upload, signed in, 2 GB": (
        lambda s: ("POST", "/api/datasets/", {"Content-Type": "multipart/form-data; boundary=x",
                                              "Authorization": f"Token {s.api_token}"}),
        413, "this route takes at most 200.1 MiB (DATASET_UPLOAD_MAX_MB)"),
    "any API write, signed in, 2 GB": (
        lambda s: ("POST", "/api/runs/", {"Content-Type": "application/json", "Authorization": f"Token {s.api_token}"}),
        413, "this route takes at most 4.0 MiB (REQUEST_BODY_MAX_MB)"),
}


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_2_gb_body_is_refused_before_it_is_read(server, attack):
    request, status, words = ATTACKS[attack]
    method, path, headers = request(server)
    answer = announce_and_send_little(server.port, method, path, headers, declared=TWO_GB)
    assert answer.status == status
    assert words in json.loads(answer.body)["detail"]
    assert received(server) == 0 and stored_nothing(server)


def test_a_dataset_page_upload_without_a_session_goes_to_the_login_page_unread(server):
    answer = announce_and_send_little(server.port, "POST", "/datasets/new/",
                                      {"Content-Type": "multipart/form-data; boundary=x"}, declared=TWO_GB)
    assert answer.status == 302 and answer.headers["location"] == "/login/?next=/datasets/new/"
    assert stored_nothing(server)


def test_a_chunked_chunk_is_cut_off_as_it_passes_the_limit(server):
    limit = CHUNK_LIMIT_MB * 1024 ** 2
    answer = stream_until_answered(server.port, "PUT", upload_path(server, step=20),
                                   {"Upload-Offset": "0", **bearer(server.seed["token"])}, most=4 * limit)
    # The body never ends (no last chunk is sent): an answer is one given in the middle of it.
    assert answer is not None, "the server took four times the limit without answering"
    assert answer.status == 413
    assert f"the body is more than {CHUNK_LIMIT_MB}.0 MiB" in json.loads(answer.body)["detail"]
    assert received(server, step=20) == 0 and stored_nothing(server)
