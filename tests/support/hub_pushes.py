"""A checkpoint to push to the stand-in Hub (tests/support/hub_server.py) and the token it takes:
written on the run's disk (in the test's process, or in a live server's shell), the push's
message read where it waits in the filesystem broker, and its end waited for."""
import base64
import json
import time
from pathlib import Path

import httpx
from django.conf import settings as django_settings

from runs.background.names import USER_QUEUE
from tests.support.asgi_server import AsgiServer
from tests.support.telemetry import add_checkpoint

TOKEN, HUB_USER = "hf_test_token_0123456789abcdef", "tester"
FILES = {"model.safetensors": bytes(range(256)) * 40, "config.json": b'{"model_type": "llama"}',
         "tokenizer/tokenizer.json": b'{"vocab": {}}', "trainer_state.pt": b"optimizer state" * 50}
# Run in a live server's shell, after `FILES = {...}`: the checkpoint written under the run's directory.
ON_DISK_CHECKPOINT = """
import json
from pathlib import Path
from django.conf import settings
from runs.models import Run
from tests.support.telemetry import add_checkpoint
run = Run.objects.get()
folder = Path(settings.RUNS_DIR) / str(run.pk) / "checkpoints" / "step-20"
for relative, data in FILES.items():
    (folder / relative).parent.mkdir(parents=True, exist_ok=True)
    (folder / relative).write_bytes(data)
print(json.dumps({"checkpoint": add_checkpoint(run, 20, str(folder)).pk}))
"""


def write_files(folder: Path, files: dict[str, bytes]) -> None:
    for relative, data in files.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_bytes(data)


def checkpoint_on_disk(run, files=FILES, step=20):
    """A checkpoint the trainer wrote on this machine, under the run's directory."""
    folder = Path(django_settings.RUNS_DIR) / str(run.pk) / "checkpoints" / f"step-{step}"
    write_files(folder, files)
    return add_checkpoint(run, step, str(folder))


def queued_messages(server: AsgiServer) -> list[str]:
    """The messages waiting on the control plane's queue of the server's filesystem broker, each with its
    body decoded (kombu keeps it in base64, where a token in clear would not show as itself)."""
    folder = Path(server.env["DATA_DIR"]) / "broker" / "out"
    messages = [path.read_text() for path in folder.glob(f"*.{USER_QUEUE}.msg")]
    return [message + base64.b64decode(json.loads(message)["body"]).decode() for message in messages]


def wait_for_push_to_end(client: httpx.Client, run_id: int, timeout_s: float = 90) -> dict:
    deadline = time.monotonic() + timeout_s
    while True:
        [listed] = client.get(f"/api/runs/{run_id}/pushes/").json()
        if listed["status"] != "pushing" or time.monotonic() > deadline:
            return listed
        time.sleep(0.2)
