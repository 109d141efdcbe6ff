"""A start-up that fails half-way stops what it had started, newest first, and the run fails
saying why; nothing it would have started later is started."""
import pytest

pytest.importorskip("torch")

from tests.support.trainers import trainer_for  # noqa: E402
from worker.trainer.startup import sequence  # noqa: E402

CODE = "def reward(prompts, completions, **columns):\n    return [1.0] * len(completions)\n"


class FakeServer:
    def __init__(self, stops: list[str]):
        self.stops = stops

    def stop(self) -> None:
        self.stops.append("server")


def test_a_start_up_failing_half_way_stops_what_it_started_in_reverse_order(tmp_path, monkeypatch):
    stops: list[str] = []

    def spawned(run):
        server = FakeServer(stops)
        run.lifecycle.started(server, server.stop)
        return server

    monkeypatch.setattr(sequence, "spawn_server", spawned)
    trainer = trainer_for(tmp_path, rewards=[{"name": "mine", "kind": "code", "source": CODE}])
    # The model is missing: loading the policy fails after the sandbox and the server started.
    assert trainer.run() == "failed"
    started = [type(part).__name__ for part in trainer.lifecycle.stopped]
    assert started == ["Crew", "FakeServer", "SandboxPool", "CheckpointKeeper", "ReportingSession"]
    assert stops == ["server"] and trainer.reward_sandbox.closed
    assert trainer.lifecycle.running == []
