"""What counts against a run's checkpoint quota, and when a chunk no longer fits."""
import pytest
from django.utils import timezone

from runs.checkpoints.views.upload import checkpoint_bytes_held
from runs.artifacts import checkpoint_store as store
from runs.checkpoints.models.checkpoint import Checkpoint


@pytest.fixture(autouse=True)
def artifacts(settings, tmp_path):
    settings.ARTIFACTS_DIR = tmp_path / "artifacts"
    settings.RUN_CHECKPOINT_QUOTA_BYTES = 10_000


def test_a_chunk_that_fits_leaves_the_room_after_it():
    assert store.check_quota(held=9_000, incoming=1_000) == 0


def test_a_chunk_past_the_quota_is_refused_naming_it():
    with pytest.raises(store.QuotaExceeded) as refused:
        store.check_quota(held=9_000, incoming=1_001)
    assert "(RUN_CHECKPOINT_QUOTA_GB); 1001 more bytes would pass it, so none were written" in str(refused.value)


def test_listed_checkpoints_and_uploads_in_progress_both_count(started_run):
    Checkpoint.objects.create(run=started_run, step=10, path="/x", size_bytes=4_000, model_version=1,
                              created_at=timezone.now(), in_store=True)
    Checkpoint.objects.create(run=started_run, step=5, path="/y", size_bytes=99_999, model_version=1,
                              created_at=timezone.now(), in_store=False)  # on the worker's disk, not here
    store.append_chunk(started_run.pk, 20, "model.safetensors", 0, [b"w" * 300], declared_size=300)
    store.append_chunk(started_run.pk, 20, "optimizer/__0_0.distcp", 0, [b"w" * 200], declared_size=1000)
    assert checkpoint_bytes_held(started_run) == 4_500
