"""Work the control plane does in the background, followed from the command line with httpx's mock
transport standing in for it: a push to the Hub and a model-played dry run show each status once
on stderr as it changes and end with the result on stdout, a failed one exits 1 with its reason;
the Hub token never comes from a flag."""
import json

import httpx
import pytest

from client.api import ControlPlane
from client.cli.main import main

HUB_TOKEN = "hf_0123456789abcdefghijklmnopqrstuv"


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch):
    monkeypatch.setattr("client.waiting.time.sleep", lambda seconds: None)


def push(status: str, files_done: int, **more) -> dict:
    return {"id": 7, "run": 3, "checkpoint": 5, "step": 20, "repo_id": "me/model", "part": "model", "status": status,
            "detail": "", "commit_url": None, "files_total": 2, "files_done": files_done, "bytes_total": 100,
            "bytes_done": 50 * files_done, **more}


class Control:
    """Answers each path from a queue of answers, the last one repeated; records what was sent."""

    def __init__(self, answers: dict[str, list]):
        self.answers, self.sent = answers, []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        queue = self.answers[f"{request.method} {request.url.path}"]
        status, body = queue.pop(0) if len(queue) > 1 else queue[0]
        return httpx.Response(status, json=body)


def grpo(capsys, control: Control, *argv) -> tuple[int, str, str]:
    code = main(list(argv), api=ControlPlane("http://127.0.0.1:9", "token", transport=httpx.MockTransport(control)))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_push_is_followed_until_pushed_with_its_progress_on_stderr(capsys, tmp_path):
    secret = tmp_path / "hub.token"
    secret.write_text(HUB_TOKEN + "\n")
    control = Control({"POST /api/runs/3/checkpoints/5/push/": [(202, push("pushing", 0))],
                       "GET /api/runs/3/pushes/": [(200, [push("pushing", 1)]), (200, [push("pushing", 1)]),
                                                   (200, [push("pushed", 2, commit_url="https://hub/c/1")])]})
    code, out, err = grpo(capsys, control, "checkpoints", "push", "3", "5", "--repo-id", "me/model",
                          "--hub-secret-file", str(secret), "--wait")
    assert code == 0 and out.strip() == "push 7 of checkpoint 5 to me/model: pushed https://hub/c/1"
    assert err.splitlines() == ["push 7: pushing, 1/2 files, 50/100 bytes", "push 7: pushed, 2/2 files, 100/100 bytes"]
    assert json.loads(control.sent[0].content) == {"repo_id": "me/model", "token": HUB_TOKEN, "part": "model",
                                                   "private": True}


def test_a_failed_push_exits_1_with_its_reason_and_a_token_flag_is_refused_unechoed(capsys, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", HUB_TOKEN)
    control = Control({"POST /api/runs/3/checkpoints/5/push/": [(202, push("pushing", 0))],
                       "GET /api/runs/3/pushes/": [(200, [push("failed", 0, detail="the Hub refused the token")])]})
    code, out, err = grpo(capsys, control, "checkpoints", "push", "3", "5", "--repo-id", "me/model", "--wait")
    assert (code, out) == (1, "") and err.splitlines()[-1] == (
        "grpo: push 7 to me/model failed: the Hub refused the token")
    code, out, err = grpo(capsys, control, "checkpoints", "push", "3", "5", "--repo-id", "x/y", "--hub-token",
                          HUB_TOKEN)
    assert code == 2 and "--hub-secret-file" in err and HUB_TOKEN not in out + err
    monkeypatch.delenv("HF_TOKEN")
    code, _, err = grpo(capsys, control, "checkpoints", "push", "3", "5", "--repo-id", "x/y")
    assert code == 2 and "needs a Hub token" in err


def dry_run(state: str, progress: str, **more) -> dict:
    return {"id": 4, "url": "/api/environments/1/dry-runs/4/", "environment": 1, "state": state,
            "progress": progress, "result": None, "error": "", **more}


def test_a_model_played_dry_run_is_followed_to_its_episode(capsys):
    episode = {"player": "model", "turns": [{"role": "user", "content": "2+2?"},
                                            {"role": "assistant", "content": "4"}], "end_reason": "done", "reward": 1.0}
    control = Control({"POST /api/environments/1/dry-run/": [(202, dry_run("queued", "queued"))],
                       "GET /api/environments/1/dry-runs/4/": [
                           (200, dry_run("loading", "loading the model")), (200, dry_run("playing", "turn 1 of 2")),
                           (200, dry_run("done", "done", result=episode))]})
    code, out, err = grpo(capsys, control, "environments", "dry-run", "1", "--model", "tiny")
    assert code == 0 and out.splitlines() == ["user: 2+2?", "assistant: 4", "ended: done; reward 1.0"]
    assert err.splitlines() == ["dry run 4: loading the model", "dry run 4: turn 1 of 2", "dry run 4: done"]
    control = Control({"POST /api/environments/1/dry-run/": [(202, dry_run("queued", "queued"))],
                       "GET /api/environments/1/dry-runs/4/": [(200, dry_run("failed", "failed", error="no GPU"))]})
    code, out, err = grpo(capsys, control, "environments", "dry-run", "1", "--json")
    assert (code, out) == (1, "") and err.splitlines()[-1] == "grpo: dry run 4 failed: no GPU"
