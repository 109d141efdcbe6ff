"""Checkpoints uploaded to a real control plane in the background: listed once whole, downloaded
byte-identical, carried through the control plane going away, refused for another run. The
control plane finishes each upload in a real consumer of its queue, after answering the
complete at once; the uploader polls until it is done or names the files to send again."""
import contextlib
import hashlib
import io
import json
import os
import tarfile
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.support.asgi_server import SEED_RUN, AsgiServer, logged_in_client
from tests.support.controlplane_consumer import running_consumer
from tests.support.s3_server import CREDENTIALS
from worker.trainer.checkpoints.keeping import CheckpointKeeper, keeper_for, shares_the_control_planes_disk
from worker.trainer.checkpoints.saving import TrainerState
from worker.trainer.checkpoints.uploader import CheckpointUploader
from worker.trainer.spec import SharedDiskSpec


class Said:
    def __init__(self):
        self.lines, self.uploaded = [], []
        self.done = threading.Event()

    def say(self, level, message):
        self.lines.append((level, message))

    def on_uploaded(self, job):
        self.uploaded.append(job.step)
        self.done.set()


def checkpoint(folder, step, seed=0):
    path = folder / "checkpoints" / f"step-{step:07d}"
    (path / "tokenizer").mkdir(parents=True)
    (path / "model.safetensors").write_bytes(os.urandom(300_000 + seed))
    (path / "trainer_state.pt").write_bytes(b"state" * 1000)
    (path / "tokenizer" / "tokenizer.json").write_text('{"vocab": {}}')
    (path / "empty.txt").write_bytes(b"")
    return path


def downloaded(server, run_id):
    owner = logged_in_client(server, "owner", "owner-pass-123")
    listed = owner.get(f"/api/runs/{run_id}/checkpoints/").json()
    files = {}
    for item in listed:
        body = owner.get(f"/api/runs/{run_id}/checkpoints/{item['id']}/download/").content
        with tarfile.open(fileobj=io.BytesIO(body)) as archive:
            files[item["step"]] = {m.name.split("/", 1)[1]: archive.extractfile(m).read()
                                   for m in archive.getmembers() if m.isfile()}
    return listed, files


def local_files(path):
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in path.rglob("*") if p.is_file()}


@contextlib.contextmanager
def serving(data_dir: Path, env: dict | None = None):
    """A server and a consumer of its queue (which finishes uploads), no run seeded yet."""
    data_dir.mkdir(exist_ok=True)
    server = AsgiServer(data_dir, env).start()
    try:
        with running_consumer(server) as consumer:
            server.consumer = consumer
            yield server
    finally:
        server.stop()


def uploads_url(server, seeded):
    return f"{server.url}/api/runs/{seeded['run_id']}/uploads/"


@contextlib.contextmanager
def live_control_plane(data_dir: Path, env: dict | None = None):
    """A control plane of one test's own, with a seeded run: for tests that stop the server, mount
    on its disk or read its consumer's log."""
    with serving(data_dir, env) as server:
        seeded = server.shell_json(SEED_RUN)
        yield server, seeded, uploads_url(server, seeded)


# Runs seeded in one `manage.py shell` (a Django start costs seconds): the owner and the other user
# once per server, then a fresh run and ingest token for each test that takes one.
SEED_RUNS = """
import json
from django.contrib.auth import get_user_model
from runs.models import Dataset, RewardFunction, Run, RunReward
from worker.trainer.config import TrainingConfig
User = get_user_model()
owner = User.objects.filter(username="owner").first() or User.objects.create_user("owner", password="owner-pass-123")
if not User.objects.filter(username="other").exists():
    User.objects.create_user("other", password="other-pass-123")
dataset, _ = Dataset.objects.get_or_create(owner=owner, name="d", defaults={
    "source": "generator", "generator": "arithmetic", "row_count": 1})
reward, _ = RewardFunction.objects.get_or_create(owner=owner, name="acc", defaults={
    "kind": "builtin", "builtin": "accuracy"})
seeded = []
for _ in range(COUNT):
    run = Run.objects.create(owner=owner, name="live", dataset=dataset, config=TrainingConfig().model_dump())
    RunReward.objects.create(run=run, reward_function=reward)
    run.enqueue()
    token = run.issue_ingest_token()
    run.save()
    seeded.append({"run_id": run.pk, "token": token})
print(json.dumps(seeded))
"""
RUNS_PER_SEEDING = 8


class SharedControlPlane:
    """One server and consumer that many tests use, each through a run (id and token) of its own."""

    def __init__(self, server: AsgiServer, bucket: str | None):
        self.server, self.bucket, self.unused = server, bucket, []

    def new_run(self) -> dict:
        if not self.unused:
            self.unused = self.server.shell_json(SEED_RUNS.replace("COUNT", str(RUNS_PER_SEEDING)))
        return self.unused.pop()


@pytest.fixture(scope="module")
def shared_control_planes(request, tmp_path_factory):
    """`plane(kind)`: this module's control plane keeping checkpoints on its disk ("filesystem") or in
    a bucket on a real S3-compatible server with a multipart threshold of 5 MB, S3's smallest part
    ("s3"); each started on first use and stopped after the module's last test."""
    planes = {}
    with contextlib.ExitStack() as stack:
        def plane(kind: str) -> SharedControlPlane:
            if kind not in planes:
                env, bucket = {}, None
                if kind == "s3":
                    s3_server = request.getfixturevalue("s3_server")
                    bucket = s3_server.new_bucket()
                    env = {"ARTIFACT_STORE_URL": f"s3://{bucket}/grpo", "ARTIFACT_STORE_ENDPOINT_URL": s3_server.url,
                           "ARTIFACT_STORE_MULTIPART_MB": "5", **CREDENTIALS}
                server = stack.enter_context(serving(tmp_path_factory.mktemp(f"cp-{kind}"), env))
                planes[kind] = SharedControlPlane(server, bucket)
            return planes[kind]

        yield plane


@pytest.fixture
def control_plane(shared_control_planes):
    """The shared filesystem control plane and a run of this test's own: (server, seeded, url)."""
    plane = shared_control_planes("filesystem")
    seeded = plane.new_run()
    return plane.server, seeded, uploads_url(plane.server, seeded)


@pytest.fixture
def private_control_plane(tmp_path):
    with live_control_plane(tmp_path / "cp") as live:
        yield live


@pytest.fixture(params=["filesystem", "s3"])
def either_store(request, shared_control_planes):
    """A shared control plane of either store and a run of this test's own: (server, seeded, url, bucket)."""
    plane = shared_control_planes(request.param)
    seeded = plane.new_run()
    return plane.server, seeded, uploads_url(plane.server, seeded), plane.bucket


def test_a_checkpoint_uploads_in_chunks_and_downloads_byte_identical(control_plane, tmp_path):
    server, seeded, url = control_plane
    said = Said()
    uploader = CheckpointUploader(url, seeded["token"], said.on_uploaded, said.say, chunk_bytes=64 * 1024)
    folder = checkpoint(tmp_path / "worker", 20)
    uploader.submit(folder, 20, 5)
    assert uploader.close(timeout_s=60) and said.uploaded == [20]
    listed, files = downloaded(server, seeded["run_id"])
    assert [(c["step"], c["in_store"], c["model_version"]) for c in listed] == [(20, True, 5)]
    assert files[20] == local_files(folder)
    assert any("checkpoint of step 20 uploaded" in message for _, message in said.lines)


def test_the_control_plane_going_away_delays_the_upload_and_loses_nothing(private_control_plane, tmp_path):
    server, seeded, url = private_control_plane
    said = Said()
    uploader = CheckpointUploader(url, seeded["token"], said.on_uploaded, said.say, chunk_bytes=32 * 1024,
                                  max_backoff_s=0.5)
    server.stop()
    folder = checkpoint(tmp_path / "worker", 40)
    uploader.submit(folder, 40, 9)
    time.sleep(2)
    assert said.uploaded == [] and any(level == "warning" and "did not answer" in message
                                       for level, message in said.lines)
    server.start()
    assert said.done.wait(60) and uploader.close(timeout_s=10)
    assert downloaded(server, seeded["run_id"])[1][40] == local_files(folder)


def test_another_runs_token_is_refused_and_not_tried_forever(control_plane, tmp_path):
    server, seeded, url = control_plane
    said = Said()
    uploader = CheckpointUploader(url, "not-this-runs-token", said.on_uploaded, said.say)
    uploader.submit(checkpoint(tmp_path / "worker", 20), 20, 1)
    assert uploader.close(timeout_s=30) and said.uploaded == []  # done with it: nothing left pending
    assert any(level == "error" and "HTTP 404" in message for level, message in said.lines)
    assert downloaded(server, seeded["run_id"])[0] == []


class RecordingReport:
    def __init__(self):
        self.lines, self.checkpoints = [], []

    def log(self, message, level="info"):
        self.lines.append((level, message))

    def checkpoint(self, step, path, size, version):
        self.checkpoints.append(step)


def test_an_uploading_worker_removes_local_copies_only_once_uploaded(control_plane, tmp_path):
    server, seeded, url = control_plane
    report = RecordingReport()
    keeper = CheckpointKeeper(tmp_path / "worker", keep_last=1, report=report, uploads_url=url, token=seeded["token"])
    folders = [checkpoint(tmp_path / "worker", step, seed=step) for step in (10, 20, 30)]
    for step, folder in zip((10, 20, 30), folders):
        keeper.keep(folder, TrainerState(step=step, model_version=step, data_position=0))
    keeper.close(timeout_s=60)
    assert report.checkpoints == []  # listed by the control plane once uploaded, not by an event
    assert [p.exists() for p in folders] == [False, False, True]
    assert [c["step"] for c in downloaded(server, seeded["run_id"])[0]] == [10, 20, 30]


def test_a_worker_that_reads_the_control_planes_secret_shares_its_disk(tmp_path):
    marker = tmp_path / ".control-plane-disk"
    marker.write_text("s" * 24)
    assert shares_the_control_planes_disk(SharedDiskSpec(path=str(marker), secret="s" * 24))
    assert not shares_the_control_planes_disk(SharedDiskSpec(path=str(marker), secret="t" * 24))
    assert not shares_the_control_planes_disk(SharedDiskSpec(path=str(tmp_path / "absent"), secret="s" * 24))
    assert not shares_the_control_planes_disk(None)


def test_a_worker_on_the_control_planes_disk_lists_by_event_and_uploads_nothing(tmp_path):
    from worker.trainer.spec import LaunchSpec

    marker = tmp_path / ".control-plane-disk"
    marker.write_text("s" * 24)
    spec = LaunchSpec.model_validate({
        "run_id": 1, "model": "m", "dataset": {"kind": "generator", "generator": "arithmetic"},
        "rewards": [{"name": "acc", "kind": "builtin", "builtin": "accuracy"}], "config": {},
        "ingest": {"url": "http://cp/api/runs/1/events/", "token": "t"}, "output_dir": str(tmp_path),
        "uploads_url": "http://cp/api/runs/1/uploads/", "shared_disk": {"path": str(marker), "secret": "s" * 24}})
    report = RecordingReport()
    keeper = keeper_for(spec, tmp_path, report)
    assert keeper.uploader is None
    keeper.keep(checkpoint(tmp_path, 5), TrainerState(step=5, model_version=5, data_position=0))
    assert report.checkpoints == [5]
    marker.write_text("another control plane's")
    elsewhere = keeper_for(spec, tmp_path, report)
    assert elsewhere.uploader is not None
    elsewhere.close(timeout_s=1)


def test_a_worker_that_never_saw_the_run_fetches_the_checkpoint_it_resumes_from(control_plane, tmp_path):
    from worker.trainer.checkpoints.fetch import CheckpointFetchError, local_checkpoint

    server, seeded, url = control_plane
    said = Said()
    uploader = CheckpointUploader(url, seeded["token"], said.on_uploaded, said.say)
    written = checkpoint(tmp_path / "first-worker", 20)
    uploader.submit(written, 20, 5)
    assert uploader.close(timeout_s=60)
    archive = f"{url}20/archive"
    elsewhere = tmp_path / "second-worker"
    resumed, fetched = local_checkpoint("/first/worker/out/checkpoints/step-0000020", archive, seeded["token"],
                                        elsewhere)
    assert fetched and resumed == str(elsewhere / "checkpoints" / "step-0000020")
    assert local_files(elsewhere / "checkpoints" / "step-0000020") == local_files(written)
    assert local_checkpoint(str(written), archive, seeded["token"], elsewhere) == (str(written), False)
    with pytest.raises(CheckpointFetchError, match="HTTP 404"):
        local_checkpoint("/gone/step-0000040", f"{url}40/archive", seeded["token"], tmp_path / "third")


def stored(server, run_id, step):
    """The checkpoint's folder in the control plane's filesystem store."""
    return Path(server.env["DATA_DIR"]) / "artifacts" / "runs" / str(run_id) / "checkpoints" / f"step-{step:07d}"


def uploaded_checkpoint(control_plane, tmp_path, step=20):
    server, seeded, url = control_plane
    said = Said()
    uploader = CheckpointUploader(url, seeded["token"], said.on_uploaded, said.say)
    written = checkpoint(tmp_path / "first-worker", step)
    uploader.submit(written, step, 5)
    assert uploader.close(timeout_s=60) and said.uploaded == [step]
    return written, f"{url}{step}/archive"


def flip_a_byte(path):
    data = bytearray(path.read_bytes())
    data[1000] ^= 0xFF
    path.write_bytes(bytes(data))
    return bytes(data)


def test_a_fetched_checkpoint_whose_file_differs_from_the_manifest_is_fetched_once_more_then_named(control_plane,
                                                                                                   tmp_path):
    from worker.trainer.checkpoints.fetch import CheckpointFetchError, local_checkpoint

    server, seeded, _ = control_plane
    written, archive = uploaded_checkpoint(control_plane, tmp_path)
    flip_a_byte(stored(server, seeded["run_id"], 20) / "model.safetensors")  # rotted in the store
    said, elsewhere = [], tmp_path / "second-worker"
    with pytest.raises(CheckpointFetchError) as failed:
        local_checkpoint("/first/worker/out/checkpoints/step-0000020", archive, seeded["token"], elsewhere,
                         on_wait=said.append)
    message = str(failed.value)
    assert "arrived wrong 2 times" in message and "1 file(s) of the checkpoint not as the control plane's " \
        "manifest says: model.safetensors (sha256 " in message
    assert len(said) == 1 and "fetching it again" in said[0]
    assert list((elsewhere / "checkpoints").iterdir()) == []  # nothing unchecked kept, no partial folder


def test_a_checkpoint_that_arrived_wrong_once_is_fetched_again_and_resumed_from(control_plane, tmp_path):
    from worker.trainer.checkpoints.fetch import local_checkpoint

    server, seeded, _ = control_plane
    written, archive = uploaded_checkpoint(control_plane, tmp_path)
    model = stored(server, seeded["run_id"], 20) / "model.safetensors"
    good = model.read_bytes()
    flip_a_byte(model)
    said = []

    def mended(message):  # between the two fetches: the bytes come right again
        said.append(message)
        model.write_bytes(good)

    elsewhere = tmp_path / "second-worker"
    resumed, fetched = local_checkpoint("/first/worker/out/checkpoints/step-0000020", archive, seeded["token"],
                                        elsewhere, on_wait=mended)
    assert fetched and local_files(elsewhere / "checkpoints" / "step-0000020") == local_files(written)
    assert len(said) == 1 and "model.safetensors" in said[0]


def test_a_checkpoint_listed_before_checksums_were_kept_is_fetched_unchecked_and_says_so(control_plane, tmp_path):
    from worker.trainer.checkpoints.fetch import local_checkpoint

    server, seeded, _ = control_plane
    written, archive = uploaded_checkpoint(control_plane, tmp_path)
    server.shell_json(f"from runs.models import Checkpoint\n"
                      f"Checkpoint.objects.filter(run_id={seeded['run_id']}).update(files=[])\nprint('{{}}')")
    said, elsewhere = [], tmp_path / "second-worker"
    local_checkpoint("/first/worker/out/checkpoints/step-0000020", archive, seeded["token"], elsewhere,
                     on_wait=said.append)
    assert local_files(elsewhere / "checkpoints" / "step-0000020") == local_files(written)
    assert len(said) == 1 and "not checked" in said[0]


def test_an_upload_broken_off_goes_on_from_what_the_control_plane_holds(control_plane, tmp_path):
    server, seeded, url = control_plane
    folder = checkpoint(tmp_path / "worker", 60)
    head = (folder / "model.safetensors").read_bytes()[:100_000]
    declared = [{"path": path, "size": len(data)} for path, data in local_files(folder).items()]
    httpx.post(f"{url}60/begin", json={"files": declared}, headers={"Authorization": f"Bearer {seeded['token']}"})
    sent = httpx.put(f"{url}60/files/model.safetensors", content=head, headers={
        "Upload-Offset": "0", "Authorization": f"Bearer {seeded['token']}"})
    assert sent.json()["received"] == 100_000  # what a worker that died had sent
    said = Said()
    uploader = CheckpointUploader(url, seeded["token"], said.on_uploaded, said.say, chunk_bytes=64 * 1024)
    uploader.submit(folder, 60, 3)
    assert uploader.close(timeout_s=60) and said.uploaded == [60]
    assert downloaded(server, seeded["run_id"])[1][60] == local_files(folder)


@pytest.fixture
def small_artifacts_disk(private_control_plane, tmp_path):
    """The control plane's ARTIFACTS_DIR on a 128 KiB tmpfs (mounting needs root: skipped elsewhere);
    `grow()` makes it roomy, as an operator freeing space would."""
    import subprocess

    mount_point = tmp_path / "cp" / "artifacts"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs", str(mount_point)],
                             capture_output=True, text=True)
    if mounted.returncode:
        pytest.skip(f"cannot mount a small tmpfs here ({mounted.stderr.strip()})")

    def grow():
        subprocess.run(["mount", "-o", "remount,size=16m", str(mount_point)], check=True)

    yield grow
    subprocess.run(["umount", "--lazy", str(mount_point)], check=False)


def test_a_full_control_plane_disk_is_said_in_the_log_and_the_local_copy_waits(private_control_plane,
                                                                               small_artifacts_disk, tmp_path):
    server, seeded, url = private_control_plane
    report = RecordingReport()
    keeper = CheckpointKeeper(tmp_path / "worker", keep_last=1, report=report, uploads_url=url, token=seeded["token"])
    keeper.uploader.max_backoff_s = 0.5
    folders = [checkpoint(tmp_path / "worker", step, seed=step) for step in (10, 20)]
    for step, folder in zip((10, 20), folders):
        keeper.keep(folder, TrainerState(step=step, model_version=step, data_position=0))
    deadline = time.monotonic() + 30
    while not any("disk is full" in message for _, message in report.lines) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert any(level == "warning" and "HTTP 507" in message and "disk is full" in message
               for level, message in report.lines)
    assert all(folder.is_dir() for folder in folders)  # nothing pruned while the control plane lacks it
    assert downloaded(server, seeded["run_id"])[0] == []
    small_artifacts_disk()
    keeper.close(timeout_s=60)
    assert [c["step"] for c in downloaded(server, seeded["run_id"])[0]] == [10, 20]
    assert [folder.exists() for folder in folders] == [False, True]


def test_a_full_control_plane_disk_reaches_the_runs_log_through_the_real_ingest(private_control_plane,
                                                                                 small_artifacts_disk, tmp_path):
    """As the trainer wires it (app.py): the keeper says what the uploader meets through the run's
    reporting session, whose events the control plane stores; the run page's log panel reads them
    from the logs API, as this test does."""
    from worker.trainer.reporting.session import ReportingSession
    from worker.trainer.spec import LaunchSpec

    server, seeded, url = private_control_plane
    spec = LaunchSpec.model_validate({
        "run_id": seeded["run_id"], "model": "m", "dataset": {"kind": "generator", "generator": "arithmetic"},
        "rewards": [{"name": "acc", "kind": "builtin", "builtin": "accuracy"}], "config": {},
        "ingest": {"url": f"{server.url}/api/runs/{seeded['run_id']}/events/", "token": seeded["token"]},
        "output_dir": str(tmp_path / "worker"), "uploads_url": url})
    report = ReportingSession(spec.ingest, "trainer:1", tmp_path / "worker" / "events").start()
    keeper = keeper_for(spec, tmp_path / "worker", report)
    keeper.uploader.max_backoff_s = 0.5
    keeper.keep(checkpoint(tmp_path / "worker", 10), TrainerState(step=10, model_version=10, data_position=0))
    owner = logged_in_client(server, "owner", "owner-pass-123")
    deadline, warnings = time.monotonic() + 30, []
    while not warnings and time.monotonic() < deadline:
        time.sleep(0.5)
        lines = owner.get(f"/api/runs/{seeded['run_id']}/logs/", params={"level": "warning"}).json()["results"]
        warnings = [line for line in lines if "HTTP 507" in line["message"]]
    assert warnings, "no warning of the full disk in the run's log"
    assert warnings[0]["level"] == "warning" and warnings[0]["source"] == "trainer"
    assert "checkpoint of step 10" in warnings[0]["message"] and "disk is full" in warnings[0]["message"]
    small_artifacts_disk()
    keeper.close(timeout_s=60)
    report.close()
    assert [c["step"] for c in downloaded(server, seeded["run_id"])[0]] == [10]


class Recording(httpx.BaseTransport):
    """The uploader's HTTP as it went: (method, path, status, body) of every exchange. `change`
    may replace a request before it is sent (a chunk corrupted on its way, say)."""

    def __init__(self, change=None):
        self.inner, self.change, self.exchanges = httpx.HTTPTransport(), change, []

    def handle_request(self, request):
        request = (self.change and self.change(request)) or request
        response = self.inner.handle_request(request)
        response.read()
        self.exchanges.append((request.method, request.url.path, response.status_code, response.content))
        return response

    def answers_to(self, method, ending):
        return [(status, body) for m, path, status, body in self.exchanges if m == method and path.endswith(ending)]


def upload_through(url, token, folder, step, transport):
    said = Said()
    uploader = CheckpointUploader(url, token, said.on_uploaded, said.say, chunk_bytes=4 * 1024 * 1024,
                                  transport=transport, max_backoff_s=0.5, max_poll_s=0.5)
    uploader.submit(folder, step, 5)
    assert uploader.close(timeout_s=120) and said.uploaded == [step], said.lines
    return said


def big_checkpoint(folder, step):
    """A checkpoint with a file over the 5 MB multipart threshold (11 MiB: three parts)."""
    path = checkpoint(folder, step)
    (path / "optimizer.pt").write_bytes(os.urandom(11 * 1024 * 1024))
    return path


def test_complete_is_answered_at_once_and_the_checkpoint_listed_once_finished(either_store, tmp_path, s3_server):
    server, seeded, url, bucket = either_store
    folder, recording = big_checkpoint(tmp_path / "worker", 20), Recording()
    said = upload_through(url, seeded["token"], folder, 20, recording)
    completes = recording.answers_to("POST", "/20/complete")
    assert [(status, json.loads(body)["state"]) for status, body in completes] == [(202, "finishing")]
    polls = [json.loads(body)["state"] for _, body in recording.answers_to("GET", "/uploads/20/")]
    assert polls[-1] == "done" and set(polls) <= {"finishing", "done"}
    assert downloaded(server, seeded["run_id"])[1][20] == local_files(folder)
    assert [message for _, message in said.lines if "control plane is checking" in message]
    if bucket:  # the big file went into the bucket in parts: its ETag counts them
        key = f"grpo/runs/{seeded['run_id']}/checkpoints/step-0000020/optimizer.pt"
        assert s3_server.client().head_object(Bucket=bucket, Key=key)["ETag"].endswith('-3"')


def test_a_chunk_corrupted_on_its_way_is_refused_and_sent_again(either_store, tmp_path):
    server, seeded, url, _ = either_store
    folder, corrupted = checkpoint(tmp_path / "worker", 30), []

    def corrupt_first_chunk(request):
        if request.method == "PUT" and request.url.path.endswith("/model.safetensors") and not corrupted:
            corrupted.append(request.url.path)
            body = bytearray(request.content)
            body[7] ^= 0xFF
            return httpx.Request("PUT", request.url, headers=request.headers, content=bytes(body))
        return None

    recording = Recording(corrupt_first_chunk)
    said = upload_through(url, seeded["token"], folder, 30, recording)
    assert [status for status, _ in recording.answers_to("PUT", "/model.safetensors")][:2] == [422, 200]
    assert any(level == "warning" and "model.safetensors" in message and "arrived otherwise" in message
               for level, message in said.lines)
    assert downloaded(server, seeded["run_id"])[1][30] == local_files(folder)


def test_a_file_found_otherwise_than_the_manifest_is_named_and_sent_again(either_store, tmp_path):
    server, seeded, url, _ = either_store
    folder, spoiled = checkpoint(tmp_path / "worker", 40), []
    received = Path(server.env["DATA_DIR"]) / "artifacts" / "runs" / str(seeded["run_id"]) / "uploads" / \
        "step-0000040" / "model.safetensors"

    def spoil_before_complete(request):  # the bytes rot on the control plane's disk after arriving
        if request.url.path.endswith("/40/complete") and not spoiled:
            spoiled.append(flip_a_byte(received))
        return None

    said = upload_through(url, seeded["token"], folder, 40, Recording(spoil_before_complete))
    assert any(level == "warning" and "found 1 file(s) otherwise than the manifest" in message
               and "model.safetensors" in message for level, message in said.lines)
    assert downloaded(server, seeded["run_id"])[1][40] == local_files(folder)


def test_two_completes_at_once_finish_the_upload_once(private_control_plane, tmp_path):
    server, seeded, url = private_control_plane
    folder = checkpoint(tmp_path / "worker", 50)
    files = local_files(folder)
    client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {seeded['token']}"}, timeout=30)
    declared = [{"path": path, "size": len(data)} for path, data in files.items()]
    assert client.post("50/begin", json={"files": declared}).status_code == 200
    for path, data in files.items():
        assert client.put(f"50/files/{path}", content=data, headers={"Upload-Offset": "0"}).status_code == 200
    manifest = {"step": 50, "model_version": 1, "local_path": str(folder), "files": [
        {**entry, "sha256": hashlib.sha256(files[entry["path"]]).hexdigest()} for entry in declared]}
    barrier, answers = threading.Barrier(2), []

    def complete():
        barrier.wait()
        answers.append(client.post("50/complete", json=manifest).json())

    racers = [threading.Thread(target=complete) for _ in range(2)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(30)
    assert [answer["round"] for answer in answers] == [1, 1]  # one complete started it, the other saw it
    deadline = time.monotonic() + 60
    while (state := client.get("50/").json())["state"] == "finishing" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert (state["state"], state["round"]) == ("done", 1)
    assert [c["step"] for c in downloaded(server, seeded["run_id"])[0]] == [50]
    finishes = server.consumer.log_path.read_text().count("runs.background.finalize_checkpoint[")
    assert finishes == 2  # one task: "received" and "succeeded"
