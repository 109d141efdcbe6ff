"""The control plane's queue and the run pools' queues share one broker (the filesystem one by default)
yet never each other's messages: a run worker polling its pool's queue leaves a task for the control
plane where it is, and the control plane's consumer takes it."""
import time

from runs.background.names import USER_QUEUE, task_name
from tests.support.asgi_server import SEED_RUN, AsgiServer, logged_in_client
from tests.support.celery_worker import start_worker, stop_worker
from tests.support.controlplane_consumer import running_consumer
from tests.support.hub_pushes import (FILES, HUB_USER, ON_DISK_CHECKPOINT, TOKEN, queued_messages,
                                      wait_for_push_to_end)
from tests.support.hub_server import HubServer

PROBE = "tests.probe.after_the_push"  # a task no one registers: a worker logs it as unregistered
SEND_PROBE = f"from controlplane.celery import app; app.send_task({PROBE!r}, queue='default')"


def wait_for_text(path, text: str, timeout_s: float = 60) -> str:
    deadline = time.monotonic() + timeout_s
    while text not in (seen := path.read_text(errors="replace")):
        assert time.monotonic() < deadline, f"no {text!r} within {timeout_s} s:\n{seen[-3000:]}"
        time.sleep(0.2)
    return seen


def test_a_run_worker_leaves_the_control_planes_task_to_its_consumer(tmp_path):
    with HubServer(token=TOKEN, user=HUB_USER) as hub, \
            AsgiServer(tmp_path, env={"HF_HUB_ENDPOINT": hub.url}) as server:
        run_id = server.shell_json(SEED_RUN)["run_id"]
        checkpoint = server.shell_json(f"FILES = {FILES!r}\n" + ON_DISK_CHECKPOINT)["checkpoint"]
        worker = start_worker(server, "default")
        try:
            wait_for_text(tmp_path / "worker.log", " ready.")
            client = logged_in_client(server, "owner", "owner-pass-123")
            answer = client.post(f"/api/runs/{run_id}/checkpoints/{checkpoint}/push/",
                                 headers={"X-CSRFToken": client.cookies["csrftoken"]},
                                 json={"repo_id": f"{HUB_USER}/routed", "token": TOKEN})
            assert answer.status_code == 202, answer.text
            # Sent after the push: once the worker has it, it has polled the folder the push waits in.
            server.manage("shell", "-c", SEND_PROBE)
            worker_log = wait_for_text(tmp_path / "worker.log", PROBE)
        finally:
            stop_worker(worker)
        assert task_name("push_checkpoint") not in worker_log
        assert len(queued_messages(server)) == 1 and hub.requests == []

        with running_consumer(server) as consumer:
            assert wait_for_push_to_end(client, run_id)["status"] == "pushed"
            # The task's message is acknowledged when it returns, a moment after it stored "pushed":
            # a consumer stopped before that puts the message back on the queue (redelivered).
            wait_for_text(consumer.log_path, f"{task_name('push_checkpoint')}[")
            wait_for_text(consumer.log_path, "succeeded in")
        consumed = consumer.log_path.read_text()
        assert f"exchange={USER_QUEUE}(direct)" in consumed and "exchange=default(" not in consumed
        assert queued_messages(server) == [] and hub.repos[f"{HUB_USER}/routed"].files

