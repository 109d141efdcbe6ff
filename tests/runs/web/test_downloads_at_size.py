"""Downloads at real sizes, against a real uvicorn: a checkpoint of ~400 MB (a sparse model file, a
random optimizer file) streams with the server's memory bounded, whatever its size; a download cut
midway goes on with Range to the same bytes (tar made on the fly, dataset file); a range past the
end is a 416; an If-Range naming other bytes gets the whole download; the worker's own fetches go
on after a cut connection and end byte-identical and checked."""
import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support.asgi_server import AsgiServer, logged_in_client
from tests.support.cutting_proxy import CuttingProxy
from worker.trainer.checkpoints.fetch import local_checkpoint
from worker.trainer.data.fetch import dataset_file
from worker.trainer.reporting.fetching import Patience
from worker.trainer.spec import DatasetSpec

MB = 2 ** 20
SPARSE_MODEL_MB, OPTIMIZER_MB, DATASET_MB, STORED_MB = 384, 8, 24, 3
MEMORY_BOUND = 64 * MB
NO_WAITING = Patience(window_s=5, first_wait_s=0.05, max_wait_s=0.1)

SEED = """
import hashlib, json, os
from pathlib import Path
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files import File
from django.utils import timezone
from runs.models import Checkpoint, Dataset, RewardFunction, Run, RunReward
from worker.trainer.config import TrainingConfig

def digest(path):
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()

owner = get_user_model().objects.create_user("owner", password="owner-pass-123")
dataset = Dataset.objects.create(owner=owner, name="big", source="upload", file_format="jsonl",
                                 sha256=digest(DATASET), size_bytes=os.path.getsize(DATASET), row_count=1)
with open(DATASET, "rb") as handle:
    dataset.file.save("big.jsonl", File(handle))
reward = RewardFunction.objects.create(owner=owner, name="acc", kind="builtin", builtin="accuracy")
run = Run.objects.create(owner=owner, name="big", dataset=dataset, config=TrainingConfig().model_dump())
RunReward.objects.create(run=run, reward_function=reward)
folder = Path(settings.RUNS_DIR) / str(run.pk) / "checkpoints" / "step-0000010"
(folder / "optimizer").mkdir(parents=True)
(folder / "config.json").write_text('{"model_type": "llama"}')
with open(folder / "model.safetensors", "wb") as handle:
    handle.truncate(SPARSE_MODEL_MB * 2 ** 20 + 123)  # sparse: no disk, all the bytes of a download
(folder / "optimizer" / "state.pt").write_bytes(os.urandom(OPTIMIZER_MB * 2 ** 20 + 7))
written = Checkpoint.objects.create(run=run, step=10, path=str(folder), created_at=timezone.now())
stored = Path(settings.ARTIFACTS_DIR) / "runs" / str(run.pk) / "checkpoints" / "step-0000020"
stored.mkdir(parents=True)
(stored / "config.json").write_text('{"model_type": "llama"}')
(stored / "model.safetensors").write_bytes(os.urandom(STORED_MB * 2 ** 20 + 11))
files = [{"path": p.name, "size": p.stat().st_size, "sha256": digest(p)} for p in sorted(stored.iterdir())]
Checkpoint.objects.create(run=run, step=20, path="/worker/step-0000020", created_at=timezone.now(),
                          in_store=True, files=files, size_bytes=sum(f["size"] for f in files))
token = run.issue_ingest_token()
run.save()
print(json.dumps({"run_id": run.pk, "token": token, "checkpoint_id": written.pk, "dataset_sha256": dataset.sha256,
                  "stored": {f["path"]: f["sha256"] for f in files}}))
"""


@dataclass(frozen=True)
class Live:
    server: AsgiServer
    run_id: int
    token: str
    checkpoint_id: int
    dataset_sha256: str
    stored: dict[str, str]

    @property
    def tar_url(self) -> str:
        return f"/api/runs/{self.run_id}/checkpoints/{self.checkpoint_id}/download/"

    @property
    def dataset_url(self) -> str:
        return f"/api/runs/{self.run_id}/dataset/"

    def archive_url(self, base: str) -> str:
        return f"{base}/api/runs/{self.run_id}/uploads/20/archive"

    def bearer(self) -> dict:
        return {"Authorization": f"Bearer {self.token}"}


@dataclass(frozen=True)
class Fetched:
    path: Path
    sha256: str
    headers: httpx.Headers


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("cp")
    dataset = data_dir / "big.jsonl"
    dataset.write_bytes(os.urandom(DATASET_MB * MB + 5))
    with AsgiServer(data_dir) as server:
        seeded = server.shell_json(f"DATASET = {str(dataset)!r}\nSPARSE_MODEL_MB = {SPARSE_MODEL_MB}\n"
                                   f"OPTIMIZER_MB = {OPTIMIZER_MB}\nSTORED_MB = {STORED_MB}\n" + SEED)
        yield Live(server, **seeded)


@pytest.fixture(scope="module")
def owner(live):
    client = logged_in_client(live.server, "owner", "owner-pass-123")
    client.timeout = httpx.Timeout(120)
    yield client
    client.close()


def save(response: httpx.Response, path: Path, mode: str = "wb", stop_after: int | None = None) -> int:
    """Writes the body to `path`; with `stop_after`, only that many bytes, then hangs up mid-body."""
    written = 0
    with path.open(mode) as out:
        for chunk in response.iter_bytes(MB):
            if stop_after is not None and written + len(chunk) >= stop_after:
                out.write(chunk[:stop_after - written])
                return stop_after
            out.write(chunk)
            written += len(chunk)
    return written


def sha256_of(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def memory_kb(pid: int) -> dict[str, int]:
    """VmRSS (now) and VmHWM (the peak so far) of a process, in kB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return {name: int(fields[name].split()[0]) for name in ("VmRSS", "VmHWM")}


@pytest.fixture(scope="module")
def whole_tar(live, owner, tmp_path_factory) -> Fetched:
    path = tmp_path_factory.mktemp("whole") / "checkpoint.tar"
    with owner.stream("GET", live.tar_url) as response:
        assert response.status_code == 200
        save(response, path)
    return Fetched(path, sha256_of(path), response.headers)


def test_a_checkpoint_of_hundreds_of_mb_streams_with_the_servers_memory_bounded(live, owner, tmp_path):
    pid = live.server.process.pid
    with owner.stream("GET", live.tar_url, headers={"Range": "bytes=0-1023"}) as warm_up:
        warm_up.read()  # the view's code paths loaded before the baseline
    before = memory_kb(pid)
    with owner.stream("GET", live.tar_url) as response:
        size = save(response, tmp_path / "checkpoint.tar")
    after = memory_kb(pid)
    assert size > SPARSE_MODEL_MB * MB and size == int(response.headers["Content-Length"])
    grown_at_peak = (after["VmHWM"] - before["VmRSS"]) * 1024
    assert grown_at_peak < MEMORY_BOUND, f"grew by {grown_at_peak / MB:.0f} MB for a {size / MB:.0f} MB download"
    assert (after["VmRSS"] - before["VmRSS"]) * 1024 < MEMORY_BOUND


def test_a_whole_tar_says_its_length_and_how_to_resume_it(whole_tar):
    headers = whole_tar.headers
    assert int(headers["Content-Length"]) == whole_tar.path.stat().st_size
    assert headers["Accept-Ranges"] == "bytes" and headers["ETag"].startswith('"') and headers["Last-Modified"]
    assert headers["Content-Type"] == "application/x-tar"


@pytest.mark.parametrize("cut_at", [700, 200 * MB + 3, (SPARSE_MODEL_MB + 2) * MB + 11])  # a header, the sparse
def test_a_tar_cut_midway_and_resumed_with_range_is_the_same_file(live, owner, whole_tar, tmp_path, cut_at):
    # file's middle, the random file's middle
    path = tmp_path / "resumed.tar"
    with owner.stream("GET", live.tar_url) as first:
        assert save(first, path, stop_after=cut_at) == cut_at
    resume = {"Range": f"bytes={cut_at}-", "If-Range": first.headers["ETag"]}
    with owner.stream("GET", live.tar_url, headers=resume) as rest:
        assert rest.status_code == 206
        assert rest.headers["Content-Range"] == f"bytes {cut_at}-{whole_tar.path.stat().st_size - 1}/" \
                                                f"{whole_tar.path.stat().st_size}"
        save(rest, path, mode="ab")
    assert sha256_of(path) == whole_tar.sha256


def test_a_closed_range_is_those_bytes_of_the_tar(live, owner, whole_tar):
    start, end = 511, 512 * 5 + 17  # across the first header and into the first file
    response = owner.get(live.tar_url, headers={"Range": f"bytes={start}-{end}"})
    assert response.status_code == 206 and len(response.content) == end - start + 1
    with whole_tar.path.open("rb") as handle:
        handle.seek(start)
        assert response.content == handle.read(end - start + 1)


def test_a_range_past_the_end_is_a_416_saying_the_length(live, owner, whole_tar):
    size = whole_tar.path.stat().st_size
    response = owner.get(live.tar_url, headers={"Range": f"bytes={size}-"})
    assert response.status_code == 416 and response.headers["Content-Range"] == f"bytes */{size}"
    assert f"{size} bytes" in response.json()["detail"]


def test_an_if_range_naming_other_bytes_gets_the_whole_download(live, owner, whole_tar):
    with owner.stream("GET", live.tar_url, headers={"Range": "bytes=100-", "If-Range": '"other-bytes"'}) as response:
        assert response.status_code == 200 and int(response.headers["Content-Length"]) == whole_tar.path.stat().st_size
        assert "Content-Range" not in response.headers


def test_the_dataset_file_cut_midway_and_resumed_with_range_is_the_same_file(live, tmp_path):
    url, path, cut_at = live.server.url + live.dataset_url, tmp_path / "dataset.jsonl", 10 * MB + 5
    with httpx.stream("GET", url, headers=live.bearer(), timeout=60) as first:
        assert first.headers["ETag"] == f'"{live.dataset_sha256}"' and first.headers["Accept-Ranges"] == "bytes"
        save(first, path, stop_after=cut_at)
    resume = {**live.bearer(), "Range": f"bytes={cut_at}-", "If-Range": first.headers["ETag"]}
    with httpx.stream("GET", url, headers=resume, timeout=60) as rest:
        assert rest.status_code == 206 and int(rest.headers["Content-Length"]) == DATASET_MB * MB + 5 - cut_at
        save(rest, path, mode="ab")
    assert sha256_of(path) == live.dataset_sha256


def test_the_workers_dataset_fetch_goes_on_after_cut_connections(live, tmp_path):
    with CuttingProxy(live.server.port, cuts=[5 * MB, 3 * MB]) as proxy:
        spec = DatasetSpec(kind="file", format="jsonl", path="/not/here/big.jsonl", url=proxy.url + live.dataset_url,
                           sha256=live.dataset_sha256)
        fetched = dataset_file(spec, live.token, cache_dir=tmp_path, patience=NO_WAITING)
        heads = proxy.request_heads()
    assert fetched.source == "fetched" and sha256_of(fetched.path) == live.dataset_sha256
    assert len(heads) == 3 and "range" not in heads[0]
    first_resume, second_resume = (int(head["range"].removeprefix("bytes=").rstrip("-")) for head in heads[1:])
    assert 0 < first_resume < 5 * MB and first_resume < second_resume < 8 * MB  # never from the start again
    assert heads[1]["if-range"] == f'"{live.dataset_sha256}"'


def test_the_workers_checkpoint_fetch_goes_on_after_a_cut_and_checks_every_file(live, tmp_path):
    with CuttingProxy(live.server.port, cuts=[2 * MB]) as proxy:
        folder, fetched = local_checkpoint("/worker/step-0000020", live.archive_url(proxy.url), live.token, tmp_path,
                                           patience=NO_WAITING)
        heads = proxy.request_heads()
    assert fetched and sorted(path.name for path in Path(folder).iterdir()) == sorted(live.stored)
    assert {path.name: sha256_of(path) for path in Path(folder).iterdir()} == live.stored
    assert len(heads) == 2 and heads[1]["range"].startswith("bytes=") and heads[1]["range"] != "bytes=0-"


def test_curl_c_continues_a_tar_download_the_network_cut(live, owner, whole_tar, tmp_path):
    path, cookie = tmp_path / "step.tar", f"sessionid={owner.cookies['sessionid']}"
    with CuttingProxy(live.server.port, cuts=[50 * MB]) as proxy:
        cut = subprocess.run(["curl", "-sS", "-b", cookie, "-o", str(path), proxy.url + live.tar_url],
                             capture_output=True, text=True, timeout=120)
    assert cut.returncode != 0 and 0 < path.stat().st_size < 50 * MB  # curl says the transfer was partial
    resumed = subprocess.run(["curl", "-sS", "-f", "-C", "-", "-b", cookie, "-o", str(path),
                              live.server.url + live.tar_url], capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert sha256_of(path) == whole_tar.sha256


def test_a_head_says_the_length_without_the_bytes(live, owner, whole_tar):
    response = owner.head(live.tar_url)
    assert response.status_code == 200 and response.content == b""
    assert int(response.headers["Content-Length"]) == whole_tar.path.stat().st_size
