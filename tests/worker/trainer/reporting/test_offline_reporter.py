"""An offline reporter (no client) on a folder an earlier one wrote: its events stay on disk."""
from worker.trainer.reporting.reporter import Reporter


def test_an_offline_reporter_after_another_leaves_the_earlier_events_unsent_and_closes_at_once(tmp_path):
    earlier = Reporter(None, tmp_path, source="trainer:1").start()
    earlier.emit({"type": "log", "message": "before the restart"})
    assert earlier.close(timeout_s=1)
    later = Reporter(None, tmp_path, source="trainer:1").start()
    later.emit({"type": "log", "message": "after the restart"})
    assert later.backlog == 0
    assert later.close(timeout_s=1)  # nothing pending that could never be sent
    assert [event["seq"] for event in later.outbox.unacked()] == [1, 2]  # kept for a reporter with a client
