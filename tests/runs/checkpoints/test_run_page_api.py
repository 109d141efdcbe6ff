"""The API endpoints added for the run page: checkpoint download (a tar stream, access-checked,
only files inside the run's own folder) and the steps that have samples."""
import io
import tarfile

import pytest

from tests.support.telemetry import add_checkpoint, add_sample


@pytest.fixture
def runs_dir(settings, tmp_path):
    settings.RUNS_DIR = tmp_path / "runs"
    return settings.RUNS_DIR


def write_checkpoint(runs_dir, run, step: int):
    folder = runs_dir / str(run.pk) / "checkpoints" / f"step-{step:07d}"
    (folder / "sub").mkdir(parents=True)
    (folder / "config.json").write_text('{"a": 1}')
    (folder / "model.safetensors").write_bytes(bytes(range(256)) * 5)  # not a multiple of 512
    (folder / "sub" / "trainer_state.pt").write_bytes(b"state")
    return folder


def download(client, run, checkpoint):
    return client.get(f"/api/runs/{run.pk}/checkpoints/{checkpoint.pk}/download/")


def test_a_checkpoint_downloads_as_a_tar_of_its_folder(owner_api, run, runs_dir):
    folder = write_checkpoint(runs_dir, run, 3)
    response = download(owner_api, run, add_checkpoint(run, 3, str(folder)))
    assert response.status_code == 200 and response["Content-Type"] == "application/x-tar"
    assert f'filename="run-{run.pk}-step-0000003.tar"' in response["Content-Disposition"]
    archive = tarfile.open(fileobj=io.BytesIO(b"".join(response.streaming_content)))
    names = sorted(archive.getnames())
    assert names == ["step-0000003/config.json", "step-0000003/model.safetensors", "step-0000003/sub/trainer_state.pt"]
    assert archive.extractfile("step-0000003/model.safetensors").read() == bytes(range(256)) * 5
    assert archive.extractfile("step-0000003/sub/trainer_state.pt").read() == b"state"


def test_another_users_checkpoint_is_404(other_api, run, runs_dir):
    folder = write_checkpoint(runs_dir, run, 3)
    assert download(other_api, run, add_checkpoint(run, 3, str(folder))).status_code == 404


def test_anonymous_download_is_refused(anon_api, run, runs_dir):
    folder = write_checkpoint(runs_dir, run, 3)
    assert download(anon_api, run, add_checkpoint(run, 3, str(folder))).status_code == 401


def test_a_checkpoint_of_another_run_is_404_under_this_run(owner_api, run, runs_dir, owner, library_for):
    second = library_for(owner, "second")["run"]
    folder = write_checkpoint(runs_dir, second, 3)
    checkpoint = add_checkpoint(second, 3, str(folder))
    assert download(owner_api, run, checkpoint).status_code == 404


def test_a_path_outside_the_run_folder_is_never_served(owner_api, run, runs_dir, tmp_path):
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "passwords").write_text("hunter2")
    for path in (str(secret), str(runs_dir / str(run.pk) / ".." / ".." / "secret")):
        response = download(owner_api, run, add_checkpoint(run, len(path), path))
        assert response.status_code == 404
        assert "outside this control plane's run directory" in response.json()["detail"]


def test_a_pruned_checkpoint_says_its_files_are_gone(owner_api, run, runs_dir):
    path = runs_dir / str(run.pk) / "checkpoints" / "step-0000009"
    response = download(owner_api, run, add_checkpoint(run, 9, str(path)))
    assert response.status_code == 404 and "no longer on disk" in response.json()["detail"]


def test_symlinks_in_a_checkpoint_are_left_out(owner_api, run, runs_dir, tmp_path):
    folder = write_checkpoint(runs_dir, run, 3)
    (tmp_path / "outside.txt").write_text("not yours")
    (folder / "link.txt").symlink_to(tmp_path / "outside.txt")
    response = download(owner_api, run, add_checkpoint(run, 3, str(folder)))
    archive = tarfile.open(fileobj=io.BytesIO(b"".join(response.streaming_content)))
    assert "step-0000003/link.txt" not in archive.getnames()


def test_sample_steps_lists_each_step_once(owner_api, run):
    for step, group in [(1, 0), (1, 1), (3, 0), (7, 0)]:
        add_sample(run, step, group)
    assert owner_api.get(f"/api/runs/{run.pk}/sample-steps/").json() == {"steps": [1, 3, 7]}
    assert owner_api.get(f"/api/runs/{run.pk}/sample-steps/?after=1").json() == {"steps": [3, 7]}


def test_sample_steps_of_another_users_run_is_404(other_api, run):
    assert other_api.get(f"/api/runs/{run.pk}/sample-steps/").status_code == 404


def test_a_bad_after_is_a_400_naming_it(owner_api, run):
    response = owner_api.get(f"/api/runs/{run.pk}/sample-steps/?after=soon")
    assert response.status_code == 400 and "after" in response.json()
