"""An uploaded dataset's file on a worker: fetched from a real control plane with the run's
token, checked against the spec's checksum, cached by it; a shared disk read directly."""
import hashlib
import json

import pytest

from tests.support.asgi_server import AsgiServer, free_port
from worker.trainer.data.fetch import DatasetFetchError, dataset_file
from worker.trainer.reporting.fetching import Patience
from worker.trainer.spec import DatasetSpec

NO_WAITING = Patience(window_s=0.5, first_wait_s=0.05, max_wait_s=0.1)
ROWS = [{"prompt": f"What is {i} + 1?", "answer": f"#### {i + 1}"} for i in range(50)]
CONTENT = "".join(json.dumps(row) + "\n" for row in ROWS).encode()
SHA256 = hashlib.sha256(CONTENT).hexdigest()

SEED_UPLOAD = """
import hashlib, json
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from runs.models import Dataset, RewardFunction, Run, RunReward
from worker.trainer.config import TrainingConfig
owner = get_user_model().objects.create_user("owner", password="owner-pass-123")
dataset = Dataset.objects.create(owner=owner, name="rows", source="upload", file_format="jsonl",
                                 sha256=hashlib.sha256(CONTENT).hexdigest(), size_bytes=len(CONTENT), row_count=50)
dataset.file.save("rows.jsonl", ContentFile(CONTENT))
reward = RewardFunction.objects.create(owner=owner, name="acc", kind="builtin", builtin="accuracy")
tokens = {}
for name in ("mine", "another"):
    run = Run.objects.create(owner=owner, name=name, dataset=dataset, config=TrainingConfig().model_dump())
    RunReward.objects.create(run=run, reward_function=reward)
    tokens[name] = {"run_id": run.pk, "token": run.issue_ingest_token()}
    run.save()
print(json.dumps(tokens))
"""


@pytest.fixture(scope="module")
def control_plane(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("cp")
    with AsgiServer(data_dir) as server:
        seeded = server.shell_json(f"CONTENT = {CONTENT!r}\n" + SEED_UPLOAD)
        yield server, seeded


def spec_for(server, run_id: int, **fields) -> DatasetSpec:
    return DatasetSpec(**{"kind": "file", "format": "jsonl", "path": "/not/on/this/machine/rows.jsonl",
                          "url": f"{server.url}/api/runs/{run_id}/dataset/", "sha256": SHA256, **fields})


def test_a_worker_without_the_file_fetches_it_checks_it_and_caches_it(control_plane, tmp_path):
    server, seeded = control_plane
    spec = spec_for(server, seeded["mine"]["run_id"])
    fetched = dataset_file(spec, seeded["mine"]["token"], cache_dir=tmp_path)
    assert fetched.source == "fetched" and fetched.path.read_bytes() == CONTENT
    assert fetched.path == tmp_path / f"{SHA256}.jsonl" and "checksum verified" in fetched.describe()
    again = dataset_file(spec, "no token needed for the cache", cache_dir=tmp_path)
    assert again.source == "cache" and again.path == fetched.path


def test_a_file_whose_checksum_differs_is_never_kept(control_plane, tmp_path):
    server, seeded = control_plane
    spec = spec_for(server, seeded["mine"]["run_id"], sha256="0" * 64)
    with pytest.raises(DatasetFetchError, match="arrived wrong 2 times: checksum mismatch"):
        dataset_file(spec, seeded["mine"]["token"], cache_dir=tmp_path, patience=NO_WAITING)
    assert list(tmp_path.iterdir()) == []  # no partial file left, nothing cached


def test_another_runs_token_is_refused_with_the_servers_reason(control_plane, tmp_path):
    server, seeded = control_plane
    spec = spec_for(server, seeded["mine"]["run_id"])
    with pytest.raises(DatasetFetchError, match="HTTP 404.*no run with this id for this token"):
        dataset_file(spec, seeded["another"]["token"], cache_dir=tmp_path)


def test_a_control_plane_that_does_not_answer_is_tried_again_then_named(tmp_path):
    spec = DatasetSpec(kind="file", format="jsonl", url=f"http://127.0.0.1:{free_port()}/api/runs/1/dataset/",
                       sha256=SHA256)
    with pytest.raises(DatasetFetchError, match=r"did not give it in [\d.]+ s and \d+ tries .* did not answer"):
        dataset_file(spec, "token", cache_dir=tmp_path, patience=NO_WAITING)


def test_a_shared_disk_is_read_in_place_when_its_file_is_the_same(tmp_path):
    shared = tmp_path / "shared.jsonl"
    shared.write_bytes(CONTENT)
    spec = DatasetSpec(kind="file", format="jsonl", path=str(shared), url="http://unused.invalid/", sha256=SHA256)
    assert dataset_file(spec, None, cache_dir=tmp_path / "cache").source == "shared disk"


def test_a_different_file_at_the_same_path_is_not_taken_for_the_dataset(tmp_path):
    shared = tmp_path / "shared.jsonl"
    shared.write_bytes(b'{"prompt": "something else"}\n')
    spec = DatasetSpec(kind="file", format="jsonl", path=str(shared), url=f"http://127.0.0.1:{free_port()}/x",
                       sha256=SHA256)
    with pytest.raises(DatasetFetchError, match="did not answer"):
        dataset_file(spec, None, cache_dir=tmp_path / "cache", patience=NO_WAITING)


def test_a_spec_without_a_url_says_the_file_is_not_here(tmp_path):
    with pytest.raises(DatasetFetchError, match="not on this machine"):
        dataset_file(DatasetSpec(kind="file", format="jsonl", path=str(tmp_path / "missing.jsonl")), None)


SEED_QUEUED_RUN_ON_A_GONE_FILE = """
import json
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from runs.training_runs.launch import build_launch_spec
from runs.models import Dataset, RewardFunction, Run, RunReward
from worker.trainer.config import TrainingConfig
owner = get_user_model().objects.get(username="owner")
dataset = Dataset.objects.create(owner=owner, name="doomed", source="upload", file_format="jsonl",
                                 sha256=SHA256, size_bytes=len(CONTENT), row_count=50)
dataset.file.save("doomed.jsonl", ContentFile(CONTENT))
run = Run.objects.create(owner=owner, name="queued", dataset=dataset,
                         config=TrainingConfig(max_steps=1).model_dump())
RunReward.objects.create(run=run, reward_function=RewardFunction.objects.get(owner=owner, name="acc"))
run.enqueue()
token = run.issue_ingest_token()
run.save()
spec = build_launch_spec(run, token)
dataset.file.storage.delete(dataset.file.name)  # gone from the disk, still listed
print(json.dumps({"run_id": run.pk, "spec": spec}))
"""


def test_a_queued_runs_dataset_file_gone_fails_the_run_at_start_saying_so(control_plane, tmp_path):
    """The launch spec as the control plane builds it, the trainer as the worker starts it, its
    status through the real ingest: the run fails before any model is loaded, its reason (shown
    on the run page) saying the dataset's file is gone from the control plane."""
    pytest.importorskip("torch")
    from worker.trainer.app import run_trainer

    server, _ = control_plane
    seeded = server.shell_json(f"CONTENT = {CONTENT!r}\nSHA256 = {SHA256!r}\n" + SEED_QUEUED_RUN_ON_A_GONE_FILE)
    spec = {**seeded["spec"], "output_dir": str(tmp_path / "worker"), "shared_disk": None}
    assert run_trainer(spec) == "failed"
    run = server.shell_json(f"""
import json
from runs.models import Run
run = Run.objects.get(pk={seeded["run_id"]})
print(json.dumps({{"status": run.status, "reason": run.error_message,
                   "errors": list(run.log_lines.filter(level="error").values_list("message", flat=True))}}))
""")
    assert run["status"] == "failed"
    assert "HTTP 404" in run["reason"] and "file of dataset 'doomed' is no longer on the control plane" in run["reason"]
    assert any("no longer on the control plane" in line for line in run["errors"])
