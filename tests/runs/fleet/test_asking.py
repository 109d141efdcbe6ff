"""Asking the fleet: live workers as typed records, an answer that is not an announcement, a
broker that is down, and one broadcast for requests in quick succession."""

from runs.fleet import asking
from tests.support.fleet import H100


def test_each_answer_becomes_a_live_worker(fleet):
    fleet.add("celery@gpu-1", queues=("gpu",), gpus=2, runs=(12,))
    fleet.add("celery@cpu-1", queues=("default", "cpu"))
    answered = asking.ask_fleet()
    assert answered.reachable
    assert [worker.name for worker in answered.workers] == ["celery@cpu-1", "celery@gpu-1"]
    gpu_worker = answered.workers[1]
    assert gpu_worker.queues == ("gpu",) and gpu_worker.gpu_count == 2
    assert gpu_worker.devices.gpus[0].name == H100
    assert [run.run_id for run in gpu_worker.runs] == [12]
    assert gpu_worker.heard_at >= answered.asked_at
    assert [worker.name for worker in answered.on_pool("cpu")] == ["celery@cpu-1"]


def test_a_worker_without_the_command_is_live_but_says_nothing_of_itself(fleet):
    fleet.add_answer("celery@old", {"error": "KeyError('grpo_announce')"})
    worker = asking.ask_fleet().workers[0]
    assert worker.queues == () and worker.devices is None
    assert "KeyError('grpo_announce')" in worker.problem


def test_a_broker_that_is_down_is_said_so_without_its_password(broker_down):
    answered = asking.ask_fleet()
    assert not answered.reachable and answered.workers == ()
    assert "cannot be reached" in answered.broker_problem and "127.0.0.1:1" in answered.broker_problem
    assert "secret" not in answered.broker_problem


def test_answers_are_reused_for_a_few_seconds(fleet, monkeypatch):
    fleet.add("celery@a")
    first = asking.current_fleet()
    assert asking.current_fleet() is first and fleet.asked == 1
    monkeypatch.setattr(asking, "CACHE_S", 0.0)
    assert asking.current_fleet() is not first and fleet.asked == 2
