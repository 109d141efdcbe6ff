"""A run started through the REST API on a pool that is a Ray cluster: a real Celery worker with
WORKER_RAY_ADDRESS, a cluster started with the control plane's environment, and the tiny model.
The run's supervisor lives in a Ray actor on the first machine it was placed on; its vLLM server
or the trainer's further processes on machines of their own. node-a, the head, has no CPU to give:
the runs land on the other nodes. One of a run's machines is lost mid-run: the run fails naming
it, and resumed on what the cluster then has, trains to the end, each step charted once. (The
first machine lost is tested with stand-in runs, test_placing_runs.py.)"""
import re
import shutil
import time
from pathlib import Path

import pytest

from tests.support.api_runs import ApiRun
from tests.support.asgi_server import AsgiServer
from tests.support.celery_worker import start_worker, stop_worker
from tests.support.processes import kill_all, processes_mentioning, processes_started_for
from tests.support.ray_cluster import start_ray_cluster
from tests.support.seeds import SEED_E2E_RUN

pytestmark = pytest.mark.slow
pytest.importorskip("ray")
MAX_STEPS = 4


def placed_on(run: ApiRun) -> list[str]:
    return [line["message"].split(" (")[0].removeprefix("placed on machine ") for line in run.logs()
            if line["message"].startswith("placed on machine ")]


def vllm_machine(logs: list[str]) -> tuple[str, str]:
    """(the machine, the URL) of the run's vLLM server, as the supervisor says where it started it."""
    line = next(line for line in logs if line.startswith("vLLM serves on"))
    return re.fullmatch(r"vLLM serves on 1 machine\(s\) of its own: engine 1 at (http://[0-9.]+:\d+) on machine "
                        r"(node-[a-z])", line).group(2, 1)


def test_vllm_on_a_machine_of_its_own_takes_the_weights_over_http_fails_the_run_when_lost_and_resumes(
        tiny_model_dir, tmp_path):
    """node-b and node-c have one CPU each: the run's supervisor and trainer take one, its vLLM
    server the other (inference_machines=1), sent the trainer's weights over HTTP at every sync.
    vLLM's machine is lost mid-run (its raylet and everything it started killed, as a machine that
    goes away): the run fails naming it. node-d joins; the run resumed from its last checkpoint
    takes the machine left and node-d, and trains to the end, each step charted once."""
    (tmp_path / "cp").mkdir()
    with AsgiServer(tmp_path / "cp") as server:
        # The machines' environment is the control plane's (MODEL_DIRS, DATA_DIR): a shared disk here.
        cluster = start_ray_cluster(((0, 0), (1, 0), (1, 0)), env=server.env)
        worker, before_loss = None, set()
        try:
            seed = SEED_E2E_RUN.replace("max_steps=3", f"max_steps={MAX_STEPS}").replace("save_steps=2", "save_steps=1")
            seed = seed.replace("per_device_train_batch_size=8", "per_device_train_batch_size=8, inference_machines=1")
            run_id = server.shell_json(f"MODEL = {str(tiny_model_dir)!r}\n" + seed)["run_id"]  # and its owner
            run = ApiRun(server, run_id)
            run.post("start")
            worker = start_worker(server, "default", env={**server.env, "WORKER_RAY_ADDRESS": cluster.address})
            run.wait_for(lambda r: r["status"] == "running" and r["current_step"] >= 2 and run.get("checkpoints/"),
                         "running past step 2 with a checkpoint", timeout_s=600)
            first_logs = [line["message"] for line in run.logs()]
            lost = cluster.node(vllm_machine(first_logs)[0])
            before_loss = upload_folders(run_id)  # earlier runs' leftovers, and the lost machine's own
            lost.kill(lost.raylet_tree())
            lost_at = time.monotonic()
            failed = run.wait_for(lambda r: r["status"] == "failed", "failed", timeout_s=90)
            noticed_s = time.monotonic() - lost_at

            cluster.add_node(1, 0)  # node-d: whatever the cluster has when the run resumes
            run.post("resume")
            finished = run.wait_for(lambda r: r["status"] in ("succeeded", "failed"), "the end", timeout_s=600)
            logs = [line["message"] for line in run.logs()]
            steps, placed = run.trained_steps(), placed_on(run)
            # The run's end stops the resumed run's vLLM machine, whose host removes its folder:
            # waited for before the cluster stops (which would end the host mid-stop).
            folders_removed = wait_for(lambda: not upload_folders(run_id) - before_loss, timeout_s=60)
        finally:
            if worker is not None:
                stop_worker(worker)
            cluster.stop()
            # What the lost machine would have taken with it: processes of its run that its
            # killed raylet's tree no longer held (multiprocessing's resource tracker), and the
            # weights' folder in its memory.
            kill_all(processes_started_for(tmp_path / "cp") - {server.process.pid})
            for folder in before_loss:
                shutil.rmtree(folder, ignore_errors=True)
    assert placed[0] != lost.name  # the trainer on one machine, vLLM on the other
    assert any("sent over HTTP to 1 server(s)" in line for line in first_logs), first_logs[-30:]
    assert re.match(rf"machine {lost.name} \([0-9.]+, Ray node [0-9a-f]{{8}}\) was lost mid-run \(vLLM engine 1 ran "
                    r"there\)", failed["error_message"] or ""), failed["error_message"]
    assert noticed_s < 60, f"the lost machine took {noticed_s:.0f} s to fail the run"
    assert finished["status"] == "succeeded", finished["error_message"]
    assert {placed[1], vllm_machine(logs[len(first_logs):])[0]} == {placed[0], "node-d"}
    assert steps == list(range(1, MAX_STEPS + 1))  # resumed from a checkpoint: none twice, none skipped
    assert processes_mentioning(str(tiny_model_dir)) == []
    assert folders_removed, "the resumed run's vLLM machine left its weights' folder in /dev/shm"


def upload_folders(run_id: int) -> set[Path]:
    """The weights' folders of the run's vLLM machines' servers (inference_machines.py's upload_parent)."""
    from worker.placement.inference_machines import upload_parent

    return set(upload_parent().glob(f"grpo-run-{run_id}-weights-*"))


def wait_for(condition, timeout_s: float):
    deadline = time.monotonic() + timeout_s
    while not (done := condition()) and time.monotonic() < deadline:
        time.sleep(0.5)
    return done


def further_machine(logs: list[str]) -> str:
    """The machine the supervisor says holds the trainer's node rank 1."""
    spans = next(line for line in logs if line.startswith("the trainer spans"))
    return re.search(r", 1 on (node-[a-z]);", spans).group(1)


def test_a_trainer_over_two_machines_fails_naming_the_one_lost_and_resumes_on_the_one_left_to_the_end(
        tiny_model_dir, tmp_path):
    """node-b and node-c have one CPU each: the run's vLLM, supervisor and trainer rank 0 take one
    machine, trainer rank 1 the other, one DDP job (gloo) between them, its checkpoints written by
    both. The machine of rank 1 is lost mid-run: the run fails naming it. Resumed on one machine
    (two to one: the checkpoint read back by one process), it takes the machine left and trains to
    the end, each step charted once."""
    (tmp_path / "cp").mkdir()
    with AsgiServer(tmp_path / "cp") as server:
        cluster = start_ray_cluster(((0, 0), (1, 0), (1, 0)), env=server.env)
        worker = None
        try:
            seed = SEED_E2E_RUN.replace("per_device_train_batch_size=8", "per_device_train_batch_size=4, "
                                        "gradient_accumulation_steps=2, trainer_machines=2")
            seed = seed.replace("max_steps=3", f"max_steps={MAX_STEPS}").replace("save_steps=2", "save_steps=1")
            run = ApiRun(server, server.shell_json(f"MODEL = {str(tiny_model_dir)!r}\n" + seed)["run_id"])
            run.post("start")
            worker = start_worker(server, "default", env={**server.env, "WORKER_RAY_ADDRESS": cluster.address})
            run.wait_for(lambda r: r["status"] == "running" and r["current_step"] >= 1 and run.get("checkpoints/"),
                         "running past step 1 with a checkpoint", timeout_s=600)
            first_logs = [line["message"] for line in run.logs()]
            lost = cluster.node(further_machine(first_logs))
            lost.kill(lost.raylet_tree())
            failed = run.wait_for(lambda r: r["status"] == "failed", "failed", timeout_s=120)

            run.post("resume", {"trainer_machines": 1})
            finished = run.wait_for(lambda r: r["status"] in ("succeeded", "failed"), "the end", timeout_s=900)
            logs = [line["message"] for line in run.logs()]
            steps, placed = run.trained_steps(), placed_on(run)
        finally:
            if worker is not None:
                stop_worker(worker)
            cluster.stop()
            kill_all(processes_started_for(tmp_path / "cp") - {server.process.pid})
    # node rank 0 where the run was placed, node rank 1 on the other machine, the store at the first's address
    first = next(line for line in first_logs if line.startswith("placed on machine "))
    name, address = re.fullmatch(r"placed on machine (node-[bc]) \(([0-9.]+), Ray node [0-9a-f]{8}\)", first).groups()
    spans = next(line for line in first_logs if line.startswith("the trainer spans"))
    assert re.fullmatch(rf"the trainer spans 2 machines: node rank 0 here, 1 on {lost.name}; its store at "
                        rf"{re.escape(address)}:\d+", spans), spans
    assert lost.name != name  # two machines, not one
    assert any("rank 1 of 2 ready" in line for line in first_logs), first_logs[-30:]  # the follower, over there
    assert re.match(rf"machine {lost.name} \([0-9.]+, Ray node [0-9a-f]{{8}}\) was lost mid-run \(the trainer's "
                    r"rank 1 ran there\)", failed["error_message"] or ""), failed["error_message"]
    assert finished["status"] == "succeeded", finished["error_message"]
    assert placed == [name, name] and finished["config"]["trainer_machines"] == 1
    assert not any(line.startswith("the trainer spans") for line in logs[len(first_logs):])
    assert steps == list(range(1, MAX_STEPS + 1))  # resumed from a checkpoint: none twice, none skipped
