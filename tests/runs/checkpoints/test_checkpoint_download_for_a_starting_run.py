"""The worker of a run that starts from an uploaded checkpoint downloads it with its own run's
token: the tar holds the checkpoint's folder and, beside it, the manifest its files were checked
against on upload, as a resume's archive does (worker/trainer/checkpoints/fetch.py checks them)."""
import io
import json
import tarfile

import pytest

from runs.checkpoints.models.checkpoint import Checkpoint
from tests.support.checkpoint_uploads import FILES, complete, manifest, upload_all
from worker.trainer.checkpoints.manifest import ARCHIVE_MANIFEST


@pytest.fixture(autouse=True)
def filesystem_store(settings, tmp_path):
    settings.ARTIFACTS_DIR = tmp_path / "artifacts"


def test_the_starting_runs_token_gets_the_uploaded_checkpoint_with_its_manifest(anon_api, started_run, owner,
                                                                                library_for):
    upload_all(anon_api, started_run)
    assert complete(anon_api, started_run, manifest()).status_code == 200
    checkpoint = Checkpoint.objects.get(run=started_run)
    starting = library_for(owner, "next")["run"]
    starting.config["init_checkpoint"] = checkpoint.pk
    token = starting.issue_ingest_token()
    starting.save()

    response = anon_api.get(f"/api/runs/{started_run.pk}/checkpoints/{checkpoint.pk}/download/",
                            {"for_run": starting.pk}, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200
    with tarfile.open(fileobj=io.BytesIO(b"".join(response.streaming_content))) as tar:
        names = {member.name for member in tar.getmembers() if member.isfile()}
        assert names == {f"step-0000020/{path}" for path in FILES} | {ARCHIVE_MANIFEST}
        assert json.loads(tar.extractfile(ARCHIVE_MANIFEST).read()) == manifest()


def test_a_for_run_that_is_not_a_run_id_is_a_401_saying_so(anon_api, started_run):
    response = anon_api.get(f"/api/runs/{started_run.pk}/checkpoints/1/download/", {"for_run": "me"},
                            HTTP_AUTHORIZATION=f"Bearer {started_run.test_token}")
    assert response.status_code == 401 and response.json() == {"detail": "for_run must be a run id, not 'me'"}
