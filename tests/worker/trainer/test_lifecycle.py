"""What a run started is stopped newest first, each stop guarded: one that fails keeps none of
the others running, and a start-up failing half-way stops what it had started."""
import pytest

from worker.trainer.lifecycle import Lifecycle


class Part:
    def __init__(self, name: str, stops: list[str], fails: bool = False):
        self.name, self.stops, self.fails = name, stops, fails

    def stop(self) -> None:
        self.stops.append(self.name)
        if self.fails:
            raise RuntimeError(f"{self.name} would not stop")


def test_parts_are_stopped_newest_first():
    stops: list[str] = []
    lifecycle = Lifecycle()
    for name in ("sandbox", "server", "rollouts"):
        part = Part(name, stops)
        lifecycle.started(part, part.stop)
    lifecycle.stop_all()
    assert stops == ["rollouts", "server", "sandbox"] and lifecycle.running == []


def test_a_part_that_fails_to_stop_does_not_keep_the_others_running(caplog):
    stops: list[str] = []
    lifecycle = Lifecycle()
    for part in (Part("server", stops), Part("judges", stops, fails=True), Part("rollouts", stops)):
        lifecycle.started(part, part.stop)
    lifecycle.stop_all()
    assert stops == ["rollouts", "judges", "server"]
    assert "while stopping Part" in caplog.text and "judges would not stop" in caplog.text


def test_a_replaced_part_is_stopped_in_the_place_of_the_one_it_replaced():
    stops: list[str] = []
    lifecycle = Lifecycle()
    server, adapter_sync, rollouts = Part("server", stops), Part("adapter sync", stops), Part("rollouts", stops)
    for part in (server, adapter_sync, rollouts):
        lifecycle.started(part, part.stop)
    merged_sync = Part("merged sync", stops)
    lifecycle.replace(adapter_sync, merged_sync, merged_sync.stop)
    lifecycle.stop_all()
    assert stops == ["rollouts", "merged sync", "server"]


def test_replacing_a_part_never_started_is_refused_naming_it():
    with pytest.raises(ValueError, match="Part is no part this run started"):
        Lifecycle().replace(Part("ghost", []), Part("other", []), lambda: None)
