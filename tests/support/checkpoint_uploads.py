"""A checkpoint uploaded as a worker uploads it, through the test client: begun (its files
declared), sent in chunks, completed against its manifest; and the finish the `controlplane`
queue's consumer would run, run here (`finish_in_background`)."""
import hashlib

from runs.checkpoints.finishing import finalize_upload
from runs.checkpoints.models.upload import CheckpointUpload, UploadState

FILES = {"model.safetensors": bytes(range(256)) * 40, "trainer_state.pt": b"state" * 100,
         "optimizer/.metadata": b"dcp", "optimizer/__0_0.distcp": b"moments" * 50,
         "tokenizer/tokenizer.json": b'{"vocab": {}}'}


def manifest(step=20, files=FILES, **changes):
    entries = [{"path": path, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
               for path, data in files.items()]
    return {"step": step, "model_version": 7, "local_path": f"/worker/out/checkpoints/step-{step:07d}",
            "files": entries, **changes}


def begin(client, run, files=FILES, step=20):
    declared = [{"path": path, "size": len(data)} for path, data in files.items()]
    return client.post(f"/api/runs/{run.pk}/uploads/{step}/begin", {"files": declared}, format="json",
                       HTTP_AUTHORIZATION=f"Bearer {run.test_token}")


def put(client, run, path, data, offset=0, step=20, token=None, **headers):
    return client.put(f"/api/runs/{run.pk}/uploads/{step}/files/{path}", data, content_type="application/octet-stream",
                      HTTP_UPLOAD_OFFSET=str(offset), HTTP_AUTHORIZATION=f"Bearer {token or run.test_token}",
                      **headers)


def post_complete(client, run, body, step=20):
    return client.post(f"/api/runs/{run.pk}/uploads/{step}/complete", body, format="json",
                       HTTP_AUTHORIZATION=f"Bearer {run.test_token}")


def upload_state(client, run, step=20):
    return client.get(f"/api/runs/{run.pk}/uploads/{step}/", HTTP_AUTHORIZATION=f"Bearer {run.test_token}")


def finish_in_background(run, step=20) -> int:
    """What the consumer does with the finalize task a complete enqueued; how many it ran."""
    finishing = list(CheckpointUpload.objects.filter(run=run, step=step, state=UploadState.FINISHING))
    for upload in finishing:
        finalize_upload(upload.pk, upload.round)
    return len(finishing)


def complete(client, run, body, step=20):
    """The worker's complete, then the background finish, then the upload's state as it polls it
    (200 once done); a refused complete (4xx) as it was answered."""
    answer = post_complete(client, run, body, step)
    if answer.status_code != 202:
        return answer
    finish_in_background(run, step)
    return upload_state(client, run, step)


def upload_all(client, run, files=FILES, step=20, chunk=1000, declared=None):
    assert begin(client, run, declared or files, step).status_code == 200
    for path, data in files.items():
        for offset in range(0, len(data), chunk):
            assert put(client, run, path, data[offset:offset + chunk], offset, step).status_code == 200
