"""Checkpoints a worker uploaded whole: moved to where they are kept, listed, announced."""
from runs.artifacts import checkpoint_store as store
from runs.events import publish
from runs.live_messages import CheckpointMessage
from runs.models import Checkpoint, Run
from worker.trainer.checkpoint_manifest import CheckpointManifest


def register_uploaded_checkpoint(run: Run, manifest: CheckpointManifest, received_at) -> Checkpoint:
    """The upload of `manifest.step`, checked by the caller, listed as the run's checkpoint of that step."""
    store.publish_checkpoint(run.pk, manifest.step)
    checkpoint, _ = Checkpoint.objects.update_or_create(
        run=run, step=manifest.step,
        defaults={"path": manifest.local_path, "size_bytes": manifest.size_bytes,
                  "model_version": manifest.model_version, "created_at": received_at, "in_store": True,
                  "files": [file.model_dump() for file in manifest.files]})
    publish(CheckpointMessage.of(run, checkpoint))  # sent once the caller's transaction commits
    return checkpoint
