"""Pushing a checkpoint to the Hugging Face Hub, through the real huggingface_hub client, against a
stand-in Hub on a local port (tests/support/hub_server.py): what arrives, what a refused token or
an unreachable Hub leave behind, which requests are refused before anything starts, who may push,
and that the token shows nowhere. The pushes run at once in the test's thread, except in the last
test, which waits for the real background thread."""
import time
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from runs.actions import hub_push
from runs.actions.hub_push import PushRequest, start_push
from runs.api.views.checkpoint_download import files_of
from runs.artifacts import checkpoint_store as store
from runs.models import HubPush
from tests.support.asgi_server import free_port
from tests.support.hub_server import HubServer
from tests.support.telemetry import add_checkpoint

TOKEN, HUB_USER = "hf_test_token_0123456789abcdef", "tester"
FILES = {"model.safetensors": bytes(range(256)) * 40, "config.json": b'{"model_type": "llama"}',
         "tokenizer/tokenizer.json": b'{"vocab": {}}', "trainer_state.pt": b"optimizer state" * 50}
SERVED = {path: data for path, data in FILES.items() if path != "trainer_state.pt"}


@pytest.fixture
def hub(settings, tmp_path):
    settings.DATA_DIR, settings.RUNS_DIR, settings.ARTIFACTS_DIR = tmp_path, tmp_path / "runs", tmp_path / "artifacts"
    with HubServer(token=TOKEN, user=HUB_USER) as server:
        settings.HF_HUB_ENDPOINT = server.url
        yield server


@pytest.fixture
def pushes_at_once(monkeypatch):
    """Pushes run in the test's thread, when the request's transaction commits."""
    monkeypatch.setattr(hub_push, "run_in_background", lambda job: job())


def write_files(folder: Path, files: dict[str, bytes]) -> None:
    for relative, data in files.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_bytes(data)


def checkpoint_on_disk(run, files=FILES, step=20):
    """A checkpoint the trainer wrote on this machine, under the run's directory."""
    folder = Path(django_settings.RUNS_DIR) / str(run.pk) / "checkpoints" / f"step-{step}"
    write_files(folder, files)
    return add_checkpoint(run, step, str(folder))


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


def test_the_push_reports_its_progress_and_takes_a_runner(run, owner, hub, monkeypatch,
                                                          django_capture_on_commit_callbacks):
    progress = []
    monkeypatch.setattr(HubPush, "note_progress", lambda self, detail: progress.append(detail))
    checkpoint = checkpoint_on_disk(run)
    request = PushRequest(repo_id=f"{HUB_USER}/public", token=TOKEN, part="all", private=False)
    with django_capture_on_commit_callbacks(execute=True):
        started = start_push(checkpoint, files_of(checkpoint), request, owner, run_in=lambda job: job())
    assert progress == ["copying files 1/4", "copying files 2/4", "copying files 3/4", "copying files 4/4",
                        f"creating tester/public on {hub.url} unless it exists", "uploading 4 files to tester/public"]
    started.refresh_from_db()
    assert started.status == "pushed" and started.private is False
    assert hub.repos[f"{HUB_USER}/public"].files == FILES and hub.repos[f"{HUB_USER}/public"].private is False


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


@pytest.mark.django_db(transaction=True)
def test_the_push_runs_in_a_background_thread_of_the_web_process(owner_api, run, hub):
    checkpoint = checkpoint_on_disk(run)
    response = owner_api.post(f"/api/runs/{run.pk}/checkpoints/{checkpoint.pk}/push/",
                              {"repo_id": f"{HUB_USER}/threaded", "token": TOKEN}, format="json")
    assert response.status_code == 202, response.content
    deadline = time.monotonic() + 60
    while (status := HubPush.objects.get().status) == "pushing" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert status == "pushed", HubPush.objects.get().detail
    assert hub.repos[f"{HUB_USER}/threaded"].files == SERVED
