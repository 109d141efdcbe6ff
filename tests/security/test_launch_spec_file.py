"""Attack: another account on the worker reads the launch spec file the supervisor writes for
the trainer (the run's ingest token, its vLLM key, the secret that signs the trainer processes'
orders), or catches it while it is written, or finds it after the run. The file is created 0600
whatever the umask, in one rename, and removed when the attempt ends; the secrets in it are
made by the worker, never stored by the control plane."""
import json
import os
import stat
from types import SimpleNamespace

import pytest

import worker.supervision.trainer_launch as trainer_launch
from worker.settings import WorkerSettings
from worker.supervisor import RunSupervisor
from worker.trainer.config import TrainingConfig
from worker.trainer.spec import LaunchSpec

SETTINGS = WorkerSettings(vllm_gpus=None, trainer_gpus=None, cancel_grace_s=5, log_lines_per_s=100)
TOKEN = "run-token-" + "x" * 30


def launch_spec(tmp_path, ingest_url: str = "http://cp/api/runs/7/events/") -> LaunchSpec:
    return LaunchSpec.model_validate({
        "run_id": 7, "model": "m", "output_dir": str(tmp_path / "out"),
        "dataset": {"kind": "generator", "generator": "arithmetic"},
        "rewards": [{"name": "acc", "kind": "builtin", "builtin": "accuracy"}],
        "config": TrainingConfig().model_dump(), "ingest": {"url": ingest_url, "token": TOKEN}})


@pytest.fixture
def open_umask():
    """A worker started with umask 0: a plain write would leave the file readable by everyone."""
    previous = os.umask(0)
    yield
    os.umask(previous)


def test_the_spec_file_is_the_owners_alone_from_its_first_byte(tmp_path, monkeypatch, open_umask):
    monkeypatch.setattr(trainer_launch, "TrainerProcess",
                        lambda *args, **options: SimpleNamespace(start=lambda: None))
    modes_when_renamed = []
    real_replace = os.replace

    def replace(source, target):  # the moment the file appears under its name
        modes_when_renamed.append(stat.S_IMODE(os.stat(source).st_mode))
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", replace)
    spec = launch_spec(tmp_path)
    supervisor = RunSupervisor(spec, SETTINGS)
    supervisor.servers.here = SimpleNamespace(url="http://127.0.0.1:9", api_key="the-servers-key")
    path = supervisor.output_dir / "spec-1.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("left from an earlier attempt")
    path.chmod(0o644)
    supervisor.trainer.start(supervisor.servers.for_trainer(), shared_memory=None)

    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and modes_when_renamed == [0o600]
    written = json.loads(path.read_text())
    assert written["ingest"]["token"] == TOKEN and written["inference_api_key"] == "the-servers-key"
    assert len(written["orders_secret"]) == 64
    assert sorted(p.name for p in path.parent.iterdir() if p.name.startswith(".")) == []  # no temporary left
    # What the control plane sent (and stores) holds neither secret.
    assert spec.orders_secret is None and spec.inference_api_key is None


def test_each_attempt_gets_a_secret_of_its_own(tmp_path, monkeypatch):
    monkeypatch.setattr(trainer_launch, "TrainerProcess",
                        lambda *args, **options: SimpleNamespace(start=lambda: None))
    secrets = set()
    for _ in range(2):
        supervisor = RunSupervisor(launch_spec(tmp_path), SETTINGS)
        supervisor.servers.here = SimpleNamespace(url="http://127.0.0.1:9", api_key="k")
        supervisor.trainer.start(supervisor.servers.for_trainer(), shared_memory=None)
        secrets.add(json.loads((supervisor.output_dir / "spec-1.json").read_text())["orders_secret"])
    assert len(secrets) == 2


def test_the_spec_file_is_gone_when_the_attempt_ends(tmp_path, monkeypatch):
    from tests.support.stub_control_plane import StubControlPlane
    from worker.trainer.inference import server as server_module

    control_plane = StubControlPlane()
    control_plane.status = "queued"
    server = SimpleNamespace(url="http://127.0.0.1:9", api_key="k", start=lambda: None, running=lambda: True,
                             when_healthy=lambda note: None, stop=lambda: None)
    monkeypatch.setattr(server_module.VLLMServer, "for_config", lambda *args, **options: server)
    written = []

    class Trainer:  # reads its spec, as each trainer process does at its start, and finishes
        def __init__(self, argv, env, log_path, **options):
            written.append(json.loads(open(argv[argv.index("--spec") + 1]).read()))
            self.tail = []

        def start(self):
            return self

        def exit_code(self):
            return 0

        def stop(self, grace_s):
            pass

    monkeypatch.setattr(trainer_launch, "TrainerProcess", Trainer)
    try:
        supervisor = RunSupervisor(launch_spec(tmp_path, control_plane.url), SETTINGS)
        assert supervisor.run() == "finished"
    finally:
        control_plane.close()
    assert written[0]["inference_api_key"] == "k"  # the trainer had it while it ran
    assert not supervisor.spec_path.exists()
