"""execute_run and its supervisor: redelivered messages do nothing, bad specs are refused,
the trainer's command and the worker's settings are built right."""
import json
import sys
from pathlib import Path
import time
from types import SimpleNamespace

import pytest

from tests.support.stub_control_plane import StubControlPlane
from worker import tasks
from worker.settings import WorkerSettings, WorkerSettingsError
from worker.supervisor import RunSupervisor
from worker.trainer.config import TrainingConfig
from worker.trainer.processes.groups import ended_how
from worker.trainer.spec import LaunchSpec
from worker.trainer_process import RateLimiter, TrainerProcess, trainer_command

SETTINGS = WorkerSettings(vllm_gpus=None, trainer_gpus=None, cancel_grace_s=5, log_lines_per_s=100)


def spec(tmp_path, url="http://cp/api/runs/7/events/", attempt=1):
    return {
        "run_id": 7, "attempt": attempt, "model": "m", "output_dir": str(tmp_path / "out"),
        "dataset": {"kind": "generator", "generator": "arithmetic"},
        "rewards": [{"name": "acc", "kind": "builtin", "builtin": "accuracy"}],
        "config": TrainingConfig().model_dump(), "ingest": {"url": url, "token": "t"},
    }


@pytest.fixture
def control_plane():
    stub = StubControlPlane()
    yield stub
    stub.close()


def test_invalid_spec_is_refused(tmp_path):
    assert tasks.execute_run.run(7, {"run_id": 7}) == "invalid-spec"


@pytest.mark.parametrize("status", ["running", "succeeded", "cancelled", "starting"])
def test_redelivered_message_for_a_run_past_queued_does_nothing(tmp_path, control_plane, status):
    control_plane.status = status
    supervisor = RunSupervisor(LaunchSpec.model_validate(spec(tmp_path, control_plane.url)), SETTINGS)
    assert supervisor.run() == "skipped"
    assert supervisor.servers.here is None and supervisor.trainer.process is None


def test_supervisor_reports_as_its_own_numbered_source(tmp_path, control_plane):
    control_plane.status = "running"
    RunSupervisor(LaunchSpec.model_validate(spec(tmp_path, control_plane.url, attempt=3)), SETTINGS).run()
    assert (tmp_path / "out" / "events" / "events-supervisor-3.jsonl").exists()


def test_the_trainer_is_told_the_supervisors_precision(tmp_path, monkeypatch):
    # The server was launched in the dtype the supervisor found fastest; the trainer must not
    # time its own answer (while that server loads) and write weights in another dtype.
    from worker.supervision import trainer_launch
    from worker.trainer.training import precision

    started = {}

    class Recorded:
        def __init__(self, argv, env, log_path, **options):
            started.update(argv=argv, env=env)

        def start(self):
            return self
    monkeypatch.setattr(trainer_launch, "TrainerProcess", Recorded)
    monkeypatch.setattr(precision, "bf16_is_fast", lambda: True)
    supervisor = RunSupervisor(LaunchSpec.model_validate(spec(tmp_path)), SETTINGS)
    supervisor.servers.here = type("Server", (), {"url": "http://127.0.0.1:1", "api_key": "k"})()
    supervisor.trainer.start(supervisor.servers.for_trainer(), shared_memory=None)
    assert started["env"][precision.ANSWER_VARIABLE] == "1"


def test_cpu_trainer_runs_as_a_plain_module(tmp_path):
    argv, env = trainer_command(tmp_path / "spec.json", gpus=None, python="py")
    assert argv == ["py", "-m", "worker.trainer", "--spec", str(tmp_path / "spec.json")] and env == {}


def test_gpu_trainer_runs_under_torchrun_one_process_per_gpu(tmp_path):
    argv, env = trainer_command(tmp_path / "spec.json", gpus="1,2,3", python="py")
    assert argv[:3] == ["py", "-m", "worker.trainer.distributed.bound_torchrun"]
    assert argv[argv.index("--nproc-per-node") + 1] == "3"
    assert argv[-4:] == ["-m", "worker.trainer", "--spec", str(tmp_path / "spec.json")]
    assert env == {"CUDA_VISIBLE_DEVICES": "1,2,3", "GLOO_SOCKET_IFNAME": "lo"}


def test_single_gpu_trainer_is_one_plain_process_on_its_gpu(tmp_path):
    argv, env = trainer_command(tmp_path / "spec.json", gpus="0", python="py")
    assert argv == ["py", "-m", "worker.trainer", "--spec", str(tmp_path / "spec.json")]
    assert env == {"CUDA_VISIBLE_DEVICES": "0"}


def test_cpu_trainer_processes_share_the_cores_under_torchrun(tmp_path):
    argv, env = trainer_command(tmp_path / "spec.json", gpus=None, processes=2, python="py", cpu_count=8)
    assert argv[argv.index("--nproc-per-node") + 1] == "2"
    assert env == {"OMP_NUM_THREADS": "4", "GLOO_SOCKET_IFNAME": "lo"}


def test_gpu_partition_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("WORKER_VLLM_GPUS", "0")
    monkeypatch.setenv("WORKER_TRAINER_GPUS", "1, 2")
    settings = WorkerSettings.from_env()
    assert (settings.vllm_gpus, settings.trainer_gpus) == ("0", "1,2")


@pytest.mark.parametrize(("name", "raw"), [("WORKER_VLLM_GPUS", "gpu0"), ("WORKER_CANCEL_GRACE_S", "soon")])
def test_malformed_worker_setting_names_the_variable(monkeypatch, name, raw):
    monkeypatch.setenv(name, raw)
    with pytest.raises(WorkerSettingsError, match=name):
        WorkerSettings.from_env()


def test_rate_limiter_allows_a_burst_then_the_rate():
    now = [0.0]
    limiter = RateLimiter(per_second=5, clock=lambda: now[0])
    assert sum(limiter.allow() for _ in range(20)) == 5
    now[0] += 1.0
    assert sum(limiter.allow() for _ in range(20)) == 5


def child(tmp_path, code: str, lines_per_s=100.0):
    forwarded = []
    process = TrainerProcess([sys.executable, "-c", code], {}, tmp_path / "trainer.log", forwarded.append,
                             lines_per_s=lines_per_s).start()
    return process, forwarded


def wait_exit(process, timeout_s=20):
    deadline = time.monotonic() + timeout_s
    while process.exit_code() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)  # let the reader drain the pipe
    return process.exit_code()


def test_a_dying_trainer_leaves_its_last_lines_as_the_reason(tmp_path):
    process, forwarded = child(tmp_path, "print('loading'); print('boom: CUDA OOM'); raise SystemExit(3)")
    assert wait_exit(process) == 3
    assert ended_how(process.exit_code()) == "exited with code 3" and list(process.tail)[-1] == "boom: CUDA OOM"
    assert forwarded == ["loading", "boom: CUDA OOM"]
    assert "boom" in (tmp_path / "trainer.log").read_text()


def test_output_is_forwarded_at_a_limited_rate(tmp_path):
    process, forwarded = child(tmp_path, "[print(i) for i in range(500)]", lines_per_s=10)
    wait_exit(process)
    assert 10 <= len(forwarded) < 50 and process.skipped == 500 - len(forwarded)


def test_a_trainer_ignoring_sigterm_is_killed(tmp_path):
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); time.sleep(60)"
    process, forwarded = child(tmp_path, code)
    deadline = time.monotonic() + 10
    while not forwarded and time.monotonic() < deadline:
        time.sleep(0.05)
    process.stop(grace_s=0.5)
    assert process.exit_code() == -9
    assert ended_how(process.exit_code()) == "was killed by SIGKILL (signal 9)"


@pytest.mark.parametrize(("child", "code", "how"), [
    ("trainer", -9, "the trainer was killed by SIGKILL (signal 9)"),
    ("trainer", 3, "the trainer exited with code 3"),
    ("server", -9, "the vLLM server was killed by SIGKILL (signal 9)"),
    ("trainers", 1, "the trainer's rank 1 was killed by SIGKILL (signal 9)"),
])
def test_a_child_that_ends_is_named_with_how_first_in_the_log_and_the_reason(tmp_path, control_plane, child,
                                                                             code, how):
    import json
    from types import SimpleNamespace

    supervisor = RunSupervisor(LaunchSpec.model_validate(spec(tmp_path, control_plane.url)), SETTINGS)
    supervisor.report.start()
    last_lines = ["step 3 done", "Traceback: boom"]
    if child == "trainers":  # under torchrun: its summary names the rank that died first
        last_lines = ["Root Cause (first observed failure):", "[0]:", "  rank      : 1 (local_rank: 1)",
                      "  exitcode  : -9 (pid: 4242)"]
        child = "trainer"
    if child == "trainer":
        supervisor.trainer.process = SimpleNamespace(exit_code=lambda: code, tail=last_lines)
        supervisor.servers.here = SimpleNamespace(running=lambda: True)
    else:
        supervisor.trainer.process = SimpleNamespace(exit_code=lambda: None)
        supervisor.servers.here = SimpleNamespace(running=lambda: False, exit_code=lambda: code,
                                                  output_tail=lambda lines: last_lines)
    assert supervisor._watch() == "failed"
    supervisor.report.close(timeout_s=5)
    events = [json.loads(line) for line in (tmp_path / "out" / "events" / "events-supervisor-1.jsonl").open()]
    assert ("error", how) in [(event["level"], event["message"]) for event in events if event["type"] == "log"]
    (status,) = [event for event in events if event["type"] == "status"]
    assert status["message"] == f"{how}; its last output:\n" + "\n".join(last_lines)


def test_what_a_finished_trainer_could_not_deliver_is_sent_by_its_worker(tmp_path, control_plane):
    from worker.supervision.leftovers import deliver_trainer_leftovers
    from worker.supervision.watch import RunWatch
    from worker.trainer.reporting.reporter import Reporter

    supervisor = RunSupervisor(LaunchSpec.model_validate(spec(tmp_path, control_plane.url)), SETTINGS)
    offline = Reporter(None, tmp_path / "out" / "events", source="trainer:1")  # the control plane was away
    offline.emit({"type": "metrics", "step": 6, "values": {"train/loss": 0.5}})
    offline.emit({"type": "status", "status": "succeeded", "message": "trained 6 steps"})
    offline.outbox.close()
    supervisor.trainer.process = SimpleNamespace(tail=[])
    watch = RunWatch(supervisor.trainer, supervisor.servers, supervisor.report.cancel_requested, 5)
    # Only a trainer that exited 0 is trusted to have ended well: the supervisor delivers its leftovers.
    assert watch.trainer_ended(0).trainer_finished and not watch.trainer_ended(1).trainer_finished
    assert control_plane.received == []
    deliver_trainer_leftovers(supervisor.spec, supervisor.report, timeout_s=10)
    assert control_plane.received == [1, 2]


def test_a_trainer_over_two_machines_meets_at_the_first_whose_store_listens_on_its_address_alone():
    from worker.trainer.distributed.rendezvous import Rendezvous

    machines = Rendezvous(("127.0.0.1", "127.0.0.1"), port=29555)
    first, env = trainer_command(Path("/s.json"), None, processes=1, python="py", cpu_count=2, machines=machines)
    second, _ = trainer_command(Path("/s.json"), None, processes=1, python="py", cpu_count=2, machines=machines,
                                node_rank=1)
    assert first[:5] == ["py", "-m", "worker.trainer.distributed.bound_torchrun", "--store-listen", "127.0.0.1"]
    assert "--store-listen" not in second  # it serves no store
    for argv, rank in ((first, "0"), (second, "1")):
        assert argv[argv.index("--nnodes") + 1] == "2" and argv[argv.index("--node-rank") + 1] == rank
        assert argv[argv.index("--master-addr") + 1:argv.index("--master-addr") + 4] == [
            "127.0.0.1", "--master-port", "29555"]
    assert env == {"OMP_NUM_THREADS": "2", "GLOO_SOCKET_IFNAME": "lo"}


def test_a_trainer_over_several_machines_sent_to_a_plain_worker_fails_saying_it_needs_a_ray_pool(tmp_path,
                                                                                                  control_plane):
    control_plane.status = "queued"
    launch = spec(tmp_path, control_plane.url)
    launch["config"] = TrainingConfig(trainer_machines=2, gradient_accumulation_steps=2).model_dump()
    supervisor = RunSupervisor(LaunchSpec.model_validate(launch), SETTINGS)
    assert supervisor.run() == "failed"
    assert supervisor.servers.here is None and supervisor.trainer.process is None  # nothing started
    events = (tmp_path / "out" / "events" / "events-supervisor-1.jsonl").read_text().splitlines()
    failed = [event for event in map(json.loads, events) if event["type"] == "status" and event["status"] == "failed"]
    assert failed[0]["message"].startswith("config.trainer_machines is 2: a run over several machines runs on a "
                                           "pool that is a Ray cluster")


def test_vllm_on_machines_of_its_own_sent_to_a_plain_worker_fails_with_nothing_started(tmp_path, control_plane):
    control_plane.status = "queued"
    launch = spec(tmp_path, control_plane.url)
    launch["config"] = TrainingConfig(inference_machines=2).model_dump()
    supervisor = RunSupervisor(LaunchSpec.model_validate(launch), SETTINGS)
    assert supervisor.run() == "failed"
    assert supervisor.servers.here is None and supervisor.trainer.process is None
    events = (tmp_path / "out" / "events" / "events-supervisor-1.jsonl").read_text().splitlines()
    failed = [event for event in map(json.loads, events) if event["type"] == "status" and event["status"] == "failed"]
    assert failed[0]["message"] == ("config.inference_machines is 2: a run over several machines runs on a pool that "
                                    "is a Ray cluster (docs/deploying/cluster.md); this worker runs its runs on its "
                                    "own machine")


def test_a_gpu_machine_of_a_trainer_over_several_sends_nccl_and_gloo_through_its_cluster_interface(monkeypatch):
    from worker.trainer.distributed.rendezvous import Rendezvous

    monkeypatch.delenv("GLOO_SOCKET_IFNAME", raising=False)
    monkeypatch.delenv("NCCL_SOCKET_IFNAME", raising=False)
    machines = Rendezvous(("127.0.0.1", "127.0.0.1"), port=29555)
    _, env = trainer_command(Path("/s.json"), "0,1", processes=None, python="py", machines=machines, node_rank=1)
    assert env == {"CUDA_VISIBLE_DEVICES": "0,1", "GLOO_SOCKET_IFNAME": "lo", "NCCL_SOCKET_IFNAME": "lo"}
    monkeypatch.setenv("NCCL_SOCKET_IFNAME", "ib0")  # the operator's choice stands
    _, env = trainer_command(Path("/s.json"), "0,1", processes=None, python="py", machines=machines, node_rank=1)
    assert env["NCCL_SOCKET_IFNAME"] == "ib0"


class ServerStandIn:
    """A vLLM server that runs until stopped."""
    url, api_key = "http://127.0.0.1:1", "k"

    def running(self):
        return True

    def healthy(self):
        return False

    def stop(self):
        pass


# Writes a weights file where the trainer writes them for vLLM, says where, then dies as an OOM kill would.
KILLED_WRITING = ("import os, pathlib, signal; folder = pathlib.Path(os.environ['GRPO_SHARED_MEMORY_DIR']); "
                  "(folder / 'grpo-weights-1').mkdir(); (folder / 'grpo-weights-1' / 'model.safetensors')"
                  ".write_bytes(b'x' * 1024); print('wrote', folder, flush=True); os.kill(os.getpid(), signal.SIGKILL)")


@pytest.mark.skipif(not Path("/dev/shm").is_dir(), reason="the attempt's folder is made in /dev/shm")
def test_a_killed_trainers_weights_in_shared_memory_are_removed_when_the_run_ends(tmp_path, monkeypatch,
                                                                                 control_plane):
    import worker.supervisor as supervisor_module
    from worker.supervision import trainer_launch

    control_plane.status = "queued"
    supervisor = RunSupervisor(LaunchSpec.model_validate(spec(tmp_path, control_plane.url)), SETTINGS)
    monkeypatch.setattr(supervisor_module, "refusal_here", lambda *args, **kwargs: None)
    monkeypatch.setattr(supervisor.servers, "start", lambda: setattr(supervisor.servers, "here", ServerStandIn()))
    monkeypatch.setattr(trainer_launch, "trainer_command",
                        lambda *args, **kwargs: ([sys.executable, "-c", KILLED_WRITING], {}))
    assert supervisor.run() == "failed"
    folder = supervisor.shared_memory.path
    assert folder.name.startswith("grpo-run-7-attempt-1-") and folder.parent == Path("/dev/shm")
    assert f"wrote {folder}" in (tmp_path / "out" / "logs" / "trainer-1.log").read_text()
    assert not folder.exists()
