"""Pushing a checkpoint to the Hugging Face Hub, through the real huggingface_hub client, against a
stand-in Hub on a local port (tests/support/hub_server.py): what arrives, what a refused token or
an unreachable Hub leave behind, which requests are refused before anything starts, who may push,
and that the token shows nowhere, the task's message included. The queued task runs at once in the
test's thread (pushes_at_once), except in the last test, where a real server queues it and a real
consumer of the control plane's queue does it."""
import io
import json
from pathlib import Path, PurePosixPath
from unittest import mock

import pytest
from django.conf import settings as django_settings

from runs.hub import push as hub_push
from runs.hub.push import PushRequest, local_path, start_push
from runs.checkpoints.readable import files_of
from runs.artifacts import checkpoint_store as store
from runs.artifacts.checkpoint_files import CheckpointFile, folder_files
from runs.background.names import USER_QUEUE, task_name
from runs.hub.models import HubPush
from tests.support.asgi_server import SEED_RUN, AsgiServer, free_port, logged_in_client
from tests.support.controlplane_consumer import running_consumer
from tests.support.hub_pushes import (FILES, HUB_USER, ON_DISK_CHECKPOINT, TOKEN, checkpoint_on_disk, queued_messages,
                                      wait_for_push_to_end, write_files)
from tests.support.hub_server import HubServer
from tests.support.telemetry import add_checkpoint

SERVED = {path: data for path, data in FILES.items() if path != "trainer_state.pt"}


@pytest.fixture
def hub(settings, tmp_path):
    settings.DATA_DIR, settings.RUNS_DIR, settings.ARTIFACTS_DIR = tmp_path, tmp_path / "runs", tmp_path / "artifacts"
    with HubServer(token=TOKEN, user=HUB_USER) as server:
        settings.HF_HUB_ENDPOINT = server.url
        yield server


@pytest.fixture
def pushes_at_once():
    """The queued push runs in the test's thread, when the request's transaction commits, as a
    consumer would run it (the registered task, with the message's arguments after a JSON trip)."""
    from controlplane.celery import app
    import runs.hub.tasks  # noqa: F401  registers the task, as a consumer's start does

    def consume(name, args, queue):
        assert queue == USER_QUEUE
        app.tasks[name](*json.loads(json.dumps(args)))

    with mock.patch.object(app, "send_task", side_effect=consume) as send:
        yield send


def checkpoint_in_store(run, files=FILES, step=20):
    """A checkpoint a worker on another machine uploaded to the artifact store."""
    write_files(store.upload_folder(run.pk, step), files)
    store.publish_checkpoint(run.pk, step)
    checkpoint = add_checkpoint(run, step, f"/elsewhere/checkpoints/step-{step}")
    checkpoint.in_store = True
    checkpoint.save()
    return checkpoint


def push(api, run, checkpoint, capture, **body):
    with capture(execute=True):
        return api.post(f"/api/runs/{run.pk}/checkpoints/{checkpoint.pk}/push/",
                        {"repo_id": f"{HUB_USER}/model", "token": TOKEN, **body}, format="json")


def pushes(api, run) -> list[dict]:
    response = api.get(f"/api/runs/{run.pk}/pushes/")
    assert response.status_code == 200, response.content
    return response.json()


def staged_folders() -> list[Path]:
    return list((Path(django_settings.DATA_DIR) / "hub-pushes").glob("*"))


@pytest.mark.parametrize("kept", [checkpoint_on_disk, checkpoint_in_store], ids=["on-disk", "in-store"])
def test_a_checkpoint_pushed_as_model_arrives_as_it_was_without_its_optimizer_state(
        owner_api, run, hub, pushes_at_once, django_capture_on_commit_callbacks, kept):
    checkpoint = kept(run)
    response = push(owner_api, run, checkpoint, django_capture_on_commit_callbacks)
    assert response.status_code == 202, response.content
    assert response.json()["status"] == "pushing" and response.json()["part"] == "model"
    [pushed] = pushes(owner_api, run)
    assert pushed["status"] == "pushed", pushed["detail"]
    assert pushed["commit_url"].startswith(f"{hub.url}/{HUB_USER}/model/commit/")
    assert pushed["detail"] == f"pushed 3 files ({sum(map(len, SERVED.values())) / 1024:.1f} KB) to tester/model"
    assert pushed["step"] == 20 and pushed["requested_by"] == "owner" and pushed["finished_at"]
    repo = hub.repos[f"{HUB_USER}/model"]
    assert repo.files == SERVED and repo.private is True
    assert repo.commits[0]["summary"] == f"r1 (run #{run.pk}), step 20: model"
    assert hub.unknown == [] and staged_folders() == []


def test_the_push_reports_its_progress_in_files_and_bytes(run, owner, hub, monkeypatch, pushes_at_once,
                                                          django_capture_on_commit_callbacks):
    progress = []
    monkeypatch.setattr(HubPush, "note_progress", lambda self, detail: progress.append(detail))
    monkeypatch.setattr(HubPush, "note_sent", lambda self, files, size, detail: progress.append((files, size)))
    checkpoint = checkpoint_on_disk(run)
    request = PushRequest(repo_id=f"{HUB_USER}/public", token=TOKEN, part="all", private=False)
    with django_capture_on_commit_callbacks(execute=True):
        started = start_push(checkpoint, files_of(checkpoint), request, owner)
    sizes = [len(FILES[path]) for path in sorted(FILES)]  # the folder's files, in the order listed
    assert (started.files_total, started.bytes_total) == (4, sum(sizes))
    assert progress == [f"creating tester/public on {hub.url} unless it exists",
                        *[(done, sum(sizes[:done])) for done in range(1, 5)], "committing 4 files to tester/public"]
    started.refresh_from_db()
    assert started.status == "pushed" and started.private is False
    assert hub.repos[f"{HUB_USER}/public"].files == FILES and hub.repos[f"{HUB_USER}/public"].private is False


def test_the_pushes_list_shows_the_files_and_bytes_done(owner_api, run, hub, pushes_at_once,
                                                        django_capture_on_commit_callbacks):
    push(owner_api, run, checkpoint_on_disk(run), django_capture_on_commit_callbacks)
    [pushed] = pushes(owner_api, run)
    size = sum(map(len, SERVED.values()))
    assert (pushed["files_done"], pushed["files_total"], pushed["bytes_done"], pushed["bytes_total"]) == (
        3, 3, size, size)


def test_a_request_only_queues_the_push_with_the_token_sealed(owner_api, run, hub, broker,
                                                               django_capture_on_commit_callbacks):
    response = push(owner_api, run, checkpoint_on_disk(run), django_capture_on_commit_callbacks)
    assert response.status_code == 202 and response.json()["status"] == "pushing"
    assert response.json()["detail"] == "waiting for the control plane's queue"
    [sent] = broker.call_args_list
    assert sent.args == (task_name("push_checkpoint"),) and sent.kwargs["queue"] == USER_QUEUE
    push_id, sealed = sent.kwargs["args"]
    assert push_id == response.json()["id"] and TOKEN not in sealed and TOKEN not in json.dumps(sent.kwargs)
    assert hub.requests == []  # nothing happened yet: the consumer does it


def test_a_folder_checkpoint_is_read_in_place(run, owner, hub, monkeypatch, pushes_at_once,
                                               django_capture_on_commit_callbacks):
    spooled, make = [], hub_push.addition
    monkeypatch.setattr(hub_push, "addition", lambda *args: spooled.append(make(*args)[1]) or make(*args))
    checkpoint = checkpoint_on_disk(run)
    with django_capture_on_commit_callbacks(execute=True):
        start_push(checkpoint, files_of(checkpoint), PushRequest(f"{HUB_USER}/in-place", TOKEN, "all"), owner)
    assert spooled == [None] * 4 and hub.repos[f"{HUB_USER}/in-place"].files == FILES


def test_a_stream_from_a_bucket_is_spooled_a_file_at_a_time_and_the_spool_removed(
        run, owner, hub, broker, django_capture_on_commit_callbacks):
    streamed = [CheckpointFile(PurePosixPath(path), len(data), 0.0, lambda data=data: io.BytesIO(data))
                for path, data in FILES.items()]
    with django_capture_on_commit_callbacks(execute=True):
        start_push(checkpoint_on_disk(run), streamed, PushRequest(f"{HUB_USER}/streamed", TOKEN, "all"), owner)
    [sent] = broker.call_args_list
    hub_push.push_checkpoint(*sent.kwargs["args"], files_of=lambda checkpoint: streamed)
    assert HubPush.objects.get().status == "pushed", HubPush.objects.get().detail
    assert hub.repos[f"{HUB_USER}/streamed"].files == FILES and staged_folders() == []


def test_local_path_is_the_file_a_folder_checkpoint_opens_and_none_for_a_stream(tmp_path):
    write_files(tmp_path, {"a/b.bin": b"x"})
    [in_folder] = folder_files(tmp_path)
    assert local_path(in_folder) == tmp_path / "a" / "b.bin"
    assert local_path(CheckpointFile(PurePosixPath("b.bin"), 1, 0.0, lambda: io.BytesIO(b"x"))) is None


def test_a_push_delivered_twice_pushes_once(owner_api, run, hub, pushes_at_once,
                                            django_capture_on_commit_callbacks):
    push(owner_api, run, checkpoint_on_disk(run), django_capture_on_commit_callbacks)
    [delivered] = pushes_at_once.call_args_list
    hub_push.push_checkpoint(*delivered.kwargs["args"], files_of=files_of)  # a consumer lost before its ack
    assert len(hub.repos[f"{HUB_USER}/model"].commits) == 1 and pushes(owner_api, run)[0]["status"] == "pushed"


def test_a_token_sealed_under_another_secret_key_fails_the_push_asking_for_another(
        owner_api, run, hub, broker, settings, django_capture_on_commit_callbacks):
    push(owner_api, run, checkpoint_on_disk(run), django_capture_on_commit_callbacks)
    [sent] = broker.call_args_list
    settings.SECRET_KEY = "rotated-" + settings.SECRET_KEY
    hub_push.push_checkpoint(*sent.kwargs["args"], files_of=files_of)
    [failed] = pushes(owner_api, run)
    assert failed["status"] == "failed" and "SECRET_KEY changed" in failed["detail"]
    assert failed["detail"].endswith("push again") and hub.requests == []


def test_a_second_push_to_the_same_repository_adds_a_commit(owner_api, run, hub, pushes_at_once,
                                                            django_capture_on_commit_callbacks):
    checkpoint = checkpoint_on_disk(run)
    push(owner_api, run, checkpoint, django_capture_on_commit_callbacks)
    later = checkpoint_on_disk(run, files={**FILES, "config.json": b"{}"}, step=40)
    push(owner_api, run, later, django_capture_on_commit_callbacks)
    listed = pushes(owner_api, run)
    assert [(p["step"], p["status"]) for p in listed] == [(40, "pushed"), (20, "pushed")]  # newest first
    assert len(hub.repos[f"{HUB_USER}/model"].commits) == 2
    assert hub.repos[f"{HUB_USER}/model"].files["config.json"] == b"{}"


def test_a_refused_token_ends_as_failed_saying_the_token_was_refused(owner_api, run, hub, pushes_at_once,
                                                                       django_capture_on_commit_callbacks):
    push(owner_api, run, checkpoint_on_disk(run), django_capture_on_commit_callbacks, token="hf_wrong")
    [failed] = pushes(owner_api, run)
    assert failed["status"] == "failed" and failed["finished_at"] and failed["commit_url"] == ""
    assert "refused the token (401 Unauthorized)" in failed["detail"]
    assert hub.repos == {} and staged_folders() == []  # the temporary copy is gone on failure too


def test_a_token_that_may_not_write_to_the_owner_says_so(owner_api, run, hub, pushes_at_once,
                                                        django_capture_on_commit_callbacks):
    push(owner_api, run, checkpoint_on_disk(run), django_capture_on_commit_callbacks, repo_id="someone-else/model")
    [failed] = pushes(owner_api, run)
    assert failed["status"] == "failed"
    assert "the token may not write to someone-else/model (403 Forbidden)" in failed["detail"]


def test_an_unreachable_hub_ends_as_failed_naming_it(owner_api, run, hub, settings, pushes_at_once,
                                                     django_capture_on_commit_callbacks):
    settings.HF_HUB_ENDPOINT = nowhere = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    push(owner_api, run, checkpoint_on_disk(run), django_capture_on_commit_callbacks)
    [failed] = pushes(owner_api, run)
    assert failed["status"] == "failed"
    assert failed["detail"].startswith(f"could not reach the Hub at {nowhere} (ConnectError")


@pytest.mark.parametrize("body, field", [
    ({"repo_id": "model-without-owner"}, "repo_id"),
    ({"repo_id": "tester/models/extra"}, "repo_id"),
    ({"repo_id": "tester/bad--name"}, "repo_id"),
    ({"repo_id": ""}, "repo_id"),
    ({"part": "everything"}, "part"),
    ({"token": ""}, "token"),
    ({"private": "perhaps"}, "private"),
])
def test_a_malformed_request_is_a_400_naming_the_field(owner_api, run, hub, body, field,
                                                       django_capture_on_commit_callbacks):
    response = push(owner_api, run, checkpoint_on_disk(run), django_capture_on_commit_callbacks, **body)
    assert response.status_code == 400 and list(response.json()) == [field], response.content
    assert not HubPush.objects.exists() and hub.requests == []


def test_a_part_the_checkpoint_lacks_is_a_404_saying_which_to_take(owner_api, run, hub,
                                                                    django_capture_on_commit_callbacks):
    response = push(owner_api, run, checkpoint_on_disk(run), django_capture_on_commit_callbacks, part="adapter")
    assert response.status_code == 404 and "not a LoRA adapter: take part=model" in response.json()["detail"]
    assert not HubPush.objects.exists()


def test_a_checkpoint_whose_files_are_not_here_is_a_404_saying_why(owner_api, run, hub,
                                                                   django_capture_on_commit_callbacks):
    elsewhere = add_checkpoint(run, 20, "/on/a/worker/step-20")
    response = push(owner_api, run, elsewhere, django_capture_on_commit_callbacks)
    assert response.status_code == 404 and "outside this control plane's run directory" in response.json()["detail"]
    assert not HubPush.objects.exists()


def test_another_users_run_is_a_404_and_anonymous_callers_are_refused(owner_api, other_api, anon_api, run, hub,
                                                                      django_capture_on_commit_callbacks):
    checkpoint = checkpoint_on_disk(run)
    assert push(other_api, run, checkpoint, django_capture_on_commit_callbacks).status_code == 404
    assert other_api.get(f"/api/runs/{run.pk}/pushes/").status_code == 404
    assert push(anon_api, run, checkpoint, django_capture_on_commit_callbacks).status_code == 401
    assert anon_api.get(f"/api/runs/{run.pk}/pushes/").status_code == 401
    assert push(owner_api, run, checkpoint, django_capture_on_commit_callbacks, repo_id="x").status_code == 400
    assert not HubPush.objects.exists() and hub.requests == []


def test_the_token_shows_in_no_answer_no_row_and_no_log(owner_api, run, hub, pushes_at_once, caplog,
                                                        django_capture_on_commit_callbacks):
    checkpoint = checkpoint_on_disk(run)
    answers = [push(owner_api, run, checkpoint, django_capture_on_commit_callbacks),
               push(owner_api, run, checkpoint, django_capture_on_commit_callbacks, token=TOKEN + "-revoked"),
               push(owner_api, run, checkpoint, django_capture_on_commit_callbacks, part="nonsense")]
    answers.append(owner_api.get(f"/api/runs/{run.pk}/pushes/"))
    assert [a.status_code for a in answers] == [202, 202, 400, 200]
    assert sorted(p["status"] for p in pushes(owner_api, run)) == ["failed", "pushed"]
    for answer in answers:
        assert TOKEN not in answer.content.decode()
    for row in HubPush.objects.values():
        assert not any(TOKEN in str(value) for value in row.values()), row
    assert TOKEN not in caplog.text


def test_a_live_server_answers_at_once_and_a_real_consumer_does_the_push(tmp_path):
    with HubServer(token=TOKEN, user=HUB_USER) as hub, \
            AsgiServer(tmp_path, env={"HF_HUB_ENDPOINT": hub.url}) as server:
        run_id = server.shell_json(SEED_RUN)["run_id"]
        checkpoint = server.shell_json(f"FILES = {FILES!r}\n" + ON_DISK_CHECKPOINT)["checkpoint"]
        client = logged_in_client(server, "owner", "owner-pass-123")
        headers = {"X-CSRFToken": client.cookies["csrftoken"]}
        answer = client.post(f"/api/runs/{run_id}/checkpoints/{checkpoint}/push/", headers=headers,
                             json={"repo_id": f"{HUB_USER}/live", "token": TOKEN})
        assert answer.status_code == 202 and answer.json()["status"] == "pushing", answer.text
        assert hub.requests == []  # queued, not done in the web process (no consumer yet)
        [message] = queued_messages(server)
        assert task_name("push_checkpoint") in message and TOKEN not in message  # what rests in the broker

        with running_consumer(server):
            listed = wait_for_push_to_end(client, run_id)
        assert listed["status"] == "pushed", listed["detail"]
        assert (listed["files_done"], listed["bytes_done"]) == (3, sum(map(len, SERVED.values())))
        assert hub.repos[f"{HUB_USER}/live"].files == SERVED
        assert TOKEN not in "".join(path.read_text() for path in tmp_path.glob("*.log"))
