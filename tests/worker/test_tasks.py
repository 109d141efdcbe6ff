"""execute_run: a redelivered or stale message does nothing; a bad spec is refused without reporting."""
from unittest import mock

import pytest

from worker import tasks
from worker.trainer.config import TrainingConfig
from worker.trainer.events import IngestReply


def spec(run_id=7):
    return {
        "run_id": run_id, "attempt": 1, "model": "m", "output_dir": "/tmp/out",
        "dataset": {"kind": "generator", "generator": "arithmetic"},
        "rewards": [{"name": "acc", "kind": "builtin", "builtin": "accuracy"}],
        "config": TrainingConfig().model_dump(), "ingest": {"url": "http://cp/api/runs/7/events/", "token": "t"},
    }


def reply(status, cancel=False):
    return IngestReply(stored=1, duplicates=0, status=status, cancel_requested=cancel)


@pytest.mark.parametrize(("status", "cancel"), [("running", False), ("succeeded", False), ("cancelled", False),
                                                ("queued", True)])
def test_message_for_a_run_that_is_no_longer_waiting_does_nothing(status, cancel):
    with mock.patch.object(tasks, "IngestClient") as client_class:
        client_class.return_value.send.return_value = reply(status, cancel)
        outcome = tasks.execute_run.run(7, spec())
    assert outcome.startswith("skipped")
    assert client_class.return_value.send.call_count == 1  # only the receipt log


def test_invalid_spec_is_refused_without_contacting_anyone():
    with mock.patch.object(tasks, "IngestClient") as client_class:
        assert tasks.execute_run.run(7, {"run_id": 7}) == "invalid-spec"
    client_class.assert_not_called()


def test_supervisor_events_are_numbered_per_attempt():
    with mock.patch.object(tasks, "IngestClient") as client_class:
        client_class.return_value.send.return_value = reply("queued")
        tasks.execute_run.run(7, {**spec(), "attempt": 3})
    assert client_class.call_args.kwargs["source"] == "supervisor:3"
