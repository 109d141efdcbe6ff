"""A queued run whose pool no live worker consumes says so on its page instead of waiting
silently; a run that is not queued does not ask the broker at all."""
import pytest

from runs.training_runs.models import Run, RunStatus


@pytest.fixture
def queued_on_gpu(run):
    Run.objects.filter(pk=run.pk).update(status=RunStatus.QUEUED, config={**run.config, "worker_pool": "gpu"})
    return run


def test_no_live_worker_on_the_pool_is_said(logged_in, fleet, queued_on_gpu):
    fleet.add("celery@cpu-1", queues=("default",))
    html = logged_in.get(f"/runs/{queued_on_gpu.pk}/").content.decode()
    assert 'id="run-pool-waiting"' in html
    assert "No live worker listens on pool &#x27;gpu&#x27;" in html and 'href="/workers/"' in html


def test_a_live_worker_on_the_pool_means_no_note(logged_in, fleet, queued_on_gpu):
    fleet.add("celery@gpu-1", queues=("gpu",), gpus=1)
    assert 'id="run-pool-waiting"' not in logged_in.get(f"/runs/{queued_on_gpu.pk}/").content.decode()


def test_a_broker_that_is_down_makes_the_wait_unknown(logged_in, broker_down, queued_on_gpu):
    html = logged_in.get(f"/runs/{queued_on_gpu.pk}/").content.decode()
    assert "Whether a worker listens on pool &#x27;gpu&#x27; is unknown" in html


@pytest.mark.parametrize("status", [RunStatus.CREATED, RunStatus.RUNNING, RunStatus.FAILED])
def test_a_run_that_is_not_queued_does_not_ask(logged_in, fleet, run, status):
    Run.objects.filter(pk=run.pk).update(status=status)
    assert 'id="run-pool-waiting"' not in logged_in.get(f"/runs/{run.pk}/").content.decode()
    assert fleet.asked == 0
