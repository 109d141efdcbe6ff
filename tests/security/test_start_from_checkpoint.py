"""Starting from an earlier checkpoint names it by id, and only one its user may see: another
user's is refused when the run is created; the new run's token downloads exactly the checkpoint it
starts from and no other; and one's own is fetched by the trainer through the real download
endpoint and loaded as the initial policy (weights only: the step starts at 0). Live server."""
import json
import sys
import shutil
from pathlib import Path

import httpx
import pytest

from tests.support import two_users

MODEL = "tiny-llama"  # prepared under the server's DATA_DIR/models, named by name

LAUNCH = """
import json
from runs.training_runs.launch import build_launch_spec
from runs.models import Run
run = Run.objects.get(pk=RUN_ID)
run.enqueue()
token = run.issue_ingest_token()
run.save()
print(json.dumps(build_launch_spec(run, token)))
"""

TOKEN_OF = """
import json
from runs.models import Run
run = Run.objects.get(pk=RUN_ID)
token = run.issue_ingest_token()
run.status = "running"
run.save()
print(json.dumps({"token": token}))
"""


@pytest.fixture(autouse=True)
def accelerate_state_left_clean():
    """The trainer built in-process here sets accelerate's process-wide state (its mixed precision);
    the trainer tests that run later in this process build their own."""
    yield
    if "accelerate.state" in sys.modules:
        sys.modules["accelerate.state"].AcceleratorState._reset_state(reset_partial_state=True)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("server")


@pytest.fixture(scope="module")
def server(data_dir):
    with two_users.start(data_dir, model=MODEL) as running:
        yield running


def test_another_users_checkpoint_is_refused_and_nothing_is_created(server):
    before = two_users.stored(server)
    theirs = server.seed["first"]["checkpoint"]
    with two_users.api(server, "second") as second:
        for checkpoint in (theirs, 999_999):
            response = second.post("/api/runs/", json=two_users.run_payload(
                server, "second", model=MODEL, init_checkpoint=checkpoint))
            assert response.status_code == 400, response.text
            assert response.json()["config"] == {"init_checkpoint": [f"no checkpoint {checkpoint} that you can see"]}
    assert two_users.stored(server) == before


def test_a_runs_token_downloads_the_checkpoint_it_starts_from_and_no_other(server):
    mine, theirs = server.seed["second"], server.seed["first"]
    starting = created_run(server, init_checkpoint=mine["checkpoint"])
    token = server.shell_json(TOKEN_OF.replace("RUN_ID", str(starting)))["token"]
    other_token = server.shell_json(TOKEN_OF.replace("RUN_ID", str(mine["run"])))["token"]

    def download(run_id, checkpoint_id, for_run, bearer):
        return httpx.get(f"{server.url}/api/runs/{run_id}/checkpoints/{checkpoint_id}/download/",
                         params={"for_run": for_run}, headers={"Authorization": f"Bearer {bearer}"}, timeout=30)

    allowed = download(mine["run"], mine["checkpoint"], starting, token)
    assert allowed.status_code == 200 and allowed.headers["content-type"] == "application/x-tar"
    stolen = download(theirs["run"], theirs["checkpoint"], starting, token)
    assert (stolen.status_code, stolen.json()) == (404, {"detail": "no such checkpoint"})
    not_its_start = download(mine["run"], mine["checkpoint"], mine["run"], other_token)
    assert (not_its_start.status_code, not_its_start.json()) == (404, {"detail": "no such checkpoint"})
    wrong_run = download(mine["run"], mine["checkpoint"], mine["run"], token)
    assert wrong_run.status_code == 401
    assert wrong_run.json() == {"detail": f"this token is not valid for run {mine['run']}"}


def test_ones_own_checkpoint_is_fetched_and_its_weights_start_the_policy(server, data_dir, tmp_path, monkeypatch):
    pytest.importorskip("torch")
    import torch

    from tests.support.trainers import events_session, logged_lines, starting_run
    from worker.trainer.spec import LaunchSpec
    from worker.trainer.startup.checkpoints import checkpoint_to_start_from
    from worker.trainer.startup.policy import load_policy

    monkeypatch.setenv("DATA_DIR", str(data_dir))  # the trainer finds the prepared model by name there
    mine = server.seed["second"]
    expected = write_real_checkpoint(data_dir, Path(mine["checkpoint_path"]))
    starting = created_run(server, init_checkpoint=mine["checkpoint"])
    spec = server.shell_json(LAUNCH.replace("RUN_ID", str(starting)))
    assert spec["init_from"] == mine["checkpoint_path"] and spec["resume_from"] is None
    assert spec["init_url"].endswith(f"/api/runs/{mine['run']}/checkpoints/{mine['checkpoint']}/download/"
                                     f"?for_run={starting}")
    # A worker on another machine: the folder the checkpoint was written to is not on its disk.
    spec |= {"init_from": "/on/another/worker/step-0000010", "output_dir": str(tmp_path / "out"),
             "shared_disk": None, "uploads_url": None}
    run = starting_run(LaunchSpec.model_validate(json.loads(json.dumps(spec))), events_session(tmp_path).start())
    run = run.with_spec(checkpoint_to_start_from(run))
    assert run.spec.init_from == str(tmp_path / "out" / "start-from" / "step-0000010")
    training, state = load_policy(run)
    assert state.step == 0 and state.model_version == 0
    loaded = training.model.state_dict()
    for name, tensor in expected.items():
        assert torch.equal(loaded[name], tensor), name
    run.report.close()
    assert f"started from the weights of checkpoint {mine['checkpoint']} ({run.spec.init_from}); optimizer " \
           "and step start afresh" in logged_lines(tmp_path)


def created_run(server, **config) -> int:
    with two_users.api(server, "second") as second:
        response = second.post("/api/runs/", json=two_users.run_payload(server, "second", model=MODEL, **config))
    assert response.status_code == 201, response.text
    assert response.json()["config"]["init_checkpoint"] == config["init_checkpoint"]
    return response.json()["id"]


def write_real_checkpoint(data_dir: Path, folder: Path) -> dict:
    """The tiny model prepared under the server's models/, and a checkpoint of it whose weights
    moved (step 10, with its optimizer): what a run trained from it would have saved."""
    import torch

    from worker.trainer.checkpoints.saving import TrainerState, save_checkpoint
    from worker.trainer.config import TrainingConfig
    from worker.trainer.models.tiny import build_tiny_model
    from worker.trainer.training.setup import build_training_parts

    build_tiny_model(data_dir / "models" / MODEL)
    parts = build_training_parts(MODEL, TrainingConfig(model=MODEL, max_steps=20))
    with torch.no_grad():
        for parameter in parts.model.parameters():
            parameter.add_(0.01)
    shutil.rmtree(folder)
    saved = save_checkpoint(folder.parent.parent, TrainerState(step=10, model_version=10, data_position=80),
                            parts.model, parts.tokenizer, parts.optimizer, parts.scheduler)
    assert saved == folder
    return {name: tensor.detach().clone() for name, tensor in parts.model.state_dict().items()}
