"""The rollout worker against a fake server: throttled by staleness, scored groups out, death surfaced."""
import asyncio
import itertools
import threading
import time

import pytest

from worker.trainer.inference.completions_client import ServerUnavailable
from worker.trainer.rollout.groups import Completion
from worker.trainer.rollout.scoring import RewardFunction, Scorer
from worker.trainer.rollout.staleness import StalenessPolicy
from worker.trainer.rollout.worker import (MAX_SCORING_THREADS, SCORING_THREADS, PromptSource, RolloutWorker,
                                           scoring_threads)


class FakeClient:
    def __init__(self, delay_s=0.01, fail_after=None):
        self.delay_s, self.fail_after = delay_s, fail_after
        self.calls = 0
        self.max_concurrent = self.concurrent = 0

    async def sample(self, prompt_ids, n, columns=None):
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise ServerUnavailable("vLLM did not answer")
        self.concurrent += 1
        self.max_concurrent = max(self.max_concurrent, self.concurrent)
        await asyncio.sleep(self.delay_s)
        self.concurrent -= 1
        return [Completion([1, 2], [-0.1, -0.2], f"#### {i}", "stop") for i in range(n)]

    async def close(self):
        pass


def make_worker(client, version=lambda: 0, max_staleness=1, groups_per_step=2, max_inflight=64, queue_maxsize=64):
    counter = itertools.count()
    prompts = PromptSource(lambda: (i := next(counter), f"prompt {i}", [i], {"answer": "#### 1"}))
    scorer = Scorer([RewardFunction("acc", 1.0, lambda p, c, answer, **k: [float(x == a) for x, a in zip(c, answer)])],
                    on_error=lambda *a: None)
    return RolloutWorker(client, prompts, scorer, StalenessPolicy(max_staleness, groups_per_step), num_generations=4,
                         max_inflight=max_inflight, queue_maxsize=queue_maxsize, current_version=version)


def take_n(worker, n, timeout_s=10):
    """Takes groups as a training loop would, letting each one's slot go once it has it."""
    groups, deadline = [], time.monotonic() + timeout_s
    while len(groups) < n and time.monotonic() < deadline:
        group = worker.take(timeout_s=0.5)
        if group:
            groups.append(group)
            worker.free_taken_slots()
    return groups


def test_scored_groups_arrive_in_submission_order_with_their_version():
    worker = make_worker(FakeClient(), version=lambda: 3).start()
    groups = take_n(worker, 6)
    worker.stop()
    assert [g.prompt_index for g in groups] == list(range(6))
    assert all(g.model_version == 3 and len(g.completions) == 4 for g in groups)
    assert groups[1].rewards["acc"] == [0.0, 1.0, 0.0, 0.0] and groups[1].totals == [0.0, 1.0, 0.0, 0.0]


def test_never_more_ahead_of_the_trainer_than_staleness_allows():
    client = FakeClient(delay_s=0.001)
    worker = make_worker(client, max_staleness=2, groups_per_step=2).start()
    time.sleep(0.5)  # the trainer takes nothing
    ahead = worker.queue_depth + worker.in_flight
    submitted = client.calls
    worker.stop()
    assert ahead == submitted == 4  # 2 groups a step × 2 versions of staleness


def test_inflight_limit_caps_concurrent_requests():
    client = FakeClient(delay_s=0.05)
    worker = make_worker(client, max_staleness=10, groups_per_step=8, max_inflight=3).start()
    take_n(worker, 10)
    worker.stop()
    assert client.max_concurrent == 3


def test_dead_server_surfaces_in_the_training_loop():
    worker = make_worker(FakeClient(fail_after=2)).start()
    with pytest.raises(RuntimeError, match="rollout worker stopped.*did not answer"):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            worker.take(timeout_s=0.1)
            worker.free_taken_slots()
    worker.stop()


def test_in_flight_versions_list_the_versions_not_yet_queued():
    version = {"now": 4}
    worker = make_worker(FakeClient(delay_s=0.3), version=lambda: version["now"], max_staleness=1,
                         groups_per_step=2).start()
    time.sleep(0.1)
    in_flight_at_submission = worker.in_flight_versions()
    version["now"] = 5
    groups = take_n(worker, 2)
    worker.stop()
    assert in_flight_at_submission == [4]
    assert [g.model_version for g in groups] == [4, 4]


def test_a_group_put_back_is_taken_again_before_younger_ones():
    worker = make_worker(FakeClient(), version=lambda: 1, max_staleness=1, groups_per_step=1).start()
    first = take_n(worker, 1)[0]
    first.model_version = 0  # as if sampled a version earlier than what is queued now
    time.sleep(0.2)
    worker.put_back(first)
    again = worker.take(timeout_s=1)
    worker.stop()
    assert again is first


def test_taken_groups_hold_their_slots_until_the_trainer_lets_them_go():
    client = FakeClient(delay_s=0.001)
    worker = make_worker(client, max_staleness=1, groups_per_step=2).start()
    time.sleep(0.3)
    taken = [worker.take(timeout_s=1), worker.take(timeout_s=1)]
    time.sleep(0.3)
    submitted_while_held = client.calls
    worker.free_taken_slots()
    time.sleep(0.3)
    worker.stop()
    assert all(taken) and submitted_while_held == 2  # budget 2: nothing new while the step holds them
    assert client.calls == 4


def test_a_discarded_group_frees_its_slot_at_once():
    client = FakeClient(delay_s=0.001)
    worker = make_worker(client, max_staleness=1, groups_per_step=2).start()
    time.sleep(0.3)
    worker.discard(worker.take(timeout_s=1))  # too stale to train: nothing waits for the step
    time.sleep(0.3)
    worker.stop()
    assert client.calls == 3


def test_a_wave_is_submitted_whole_once_half_the_staleness_budget_is_free():
    client = FakeClient(delay_s=0.01)
    worker = make_worker(client, max_staleness=4, groups_per_step=1)  # useful bound 4, waves of 2
    worker.wave = worker.staleness.half_ahead
    worker.start()
    wait_until(lambda: worker.queue_depth == 4)
    assert worker.take(timeout_s=1) is not None
    worker.free_taken_slots()  # one place free: less than a wave, and 3 groups still ahead
    time.sleep(0.3)
    assert client.calls == 4 and not worker.server_has_work()
    assert worker.take(timeout_s=1) is not None
    worker.free_taken_slots()
    wait_until(lambda: client.calls == 6)
    worker.stop()


def test_the_server_has_work_from_the_moment_places_are_freed():
    client = FakeClient(delay_s=0.5)
    worker = make_worker(client, max_staleness=0, groups_per_step=1)
    worker.start()
    wait_until(lambda: worker.queue_depth == 1)
    assert not worker.server_has_work()
    assert worker.take(timeout_s=1) is not None
    worker.free_taken_slots()
    assert worker.server_has_work()  # before the background thread has submitted anything
    wait_until(lambda: client.concurrent == 1)
    assert worker.server_has_work()  # while the server generates
    wait_until(lambda: worker.queue_depth == 1)
    assert not worker.server_has_work()
    worker.stop()


def wait_until(condition, timeout_s=5.0):
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.01)


def test_a_prompts_task_prompt_travels_with_its_group():
    counter = itertools.count()
    prompts = PromptSource(lambda: (i := next(counter), f"<chat>prompt {i}</chat>", [i], {}, f"prompt {i}"))
    scorer = Scorer([RewardFunction("one", 1.0, lambda p, c, **k: [1.0] * len(c))], on_error=lambda *a: None)
    worker = RolloutWorker(FakeClient(), prompts, scorer, StalenessPolicy(1, 2), num_generations=2, max_inflight=8,
                           queue_maxsize=8, current_version=lambda: 0).start()
    groups = take_n(worker, 2)
    worker.stop()
    assert [(g.prompt_text, g.task_prompt) for g in groups] == [("<chat>prompt 0</chat>", "prompt 0"),
                                                                ("<chat>prompt 1</chat>", "prompt 1")]


def test_a_judge_waiting_on_one_group_never_holds_up_another_groups_judging():
    # Each group's judge answers only once every group in flight is being judged: with a scoring
    # thread per group in flight they all get there; with fewer threads the barrier would break.
    in_flight = 6
    everyone_judging = threading.Barrier(in_flight, timeout=10)

    def judge(prompts, completions, **columns):
        everyone_judging.wait()
        return [1.0] * len(completions)

    counter = itertools.count()
    prompts = PromptSource(lambda: (i := next(counter), f"prompt {i}", [i], {}))
    errors = []
    scorer = Scorer([RewardFunction("judge", 1.0, judge, pass_threshold=0.5)], on_error=lambda *a: errors.append(a))
    worker = RolloutWorker(FakeClient(delay_s=0.001), prompts, scorer, StalenessPolicy(1, in_flight),
                           num_generations=2, max_inflight=in_flight, queue_maxsize=in_flight,
                           current_version=lambda: 0, scoring_threads=scoring_threads(True, in_flight)).start()
    groups = take_n(worker, in_flight)
    worker.stop()
    assert errors == [] and len(groups) == in_flight
    assert all(g.rewards["judge"] == [1.0, 1.0] for g in groups)


@pytest.mark.parametrize(("judged", "groups_in_flight", "threads"), [
    (False, 64, SCORING_THREADS), (True, 1, SCORING_THREADS), (True, 16, 16), (True, 100_000, MAX_SCORING_THREADS),
])
def test_scoring_threads_grow_to_the_groups_in_flight_only_with_a_judge(judged, groups_in_flight, threads):
    assert scoring_threads(judged, groups_in_flight) == threads


def test_a_full_staleness_bound_is_counted_as_what_held_submissions_back():
    worker = make_worker(FakeClient(delay_s=0.001), max_staleness=1, groups_per_step=2).start()
    wait_until(lambda: worker.queue_depth == 2)  # the trainer takes nothing: the bound is full
    worker.take_window()
    time.sleep(0.3)
    window = worker.take_window()
    worker.stop()
    assert window.polls > 0 and window.held_by_staleness == window.polls
    assert window.metrics()["async/blocked_by_staleness"] == 1.0


def test_a_full_inflight_cap_is_counted_and_a_raised_cap_submits_more_at_once():
    client = FakeClient(delay_s=0.2)
    worker = make_worker(client, max_staleness=10, groups_per_step=8, max_inflight=1).start()
    time.sleep(0.3)
    window = worker.take_window()
    assert window.held_by_inflight_cap > 0 and window.held_by_staleness == window.held_by_queue == 0
    assert client.max_concurrent == 1
    worker.set_max_inflight(3)
    wait_until(lambda: client.max_concurrent == 3)
    worker.stop()


def test_a_wave_held_back_is_counted_for_no_bound():
    client = FakeClient(delay_s=0.01)
    worker = make_worker(client, max_staleness=4, groups_per_step=1)  # useful bound 4, waves of 2
    worker.wave = worker.staleness.half_ahead
    worker.start()
    wait_until(lambda: worker.queue_depth == 4)
    assert worker.take(timeout_s=1) is not None
    worker.free_taken_slots()  # one place free: less than a wave
    worker.take_window()
    time.sleep(0.3)
    window = worker.take_window()
    assert client.calls == 4 and window.polls > 0
    assert window.held_by_staleness == window.held_by_inflight_cap == window.held_by_queue == 0
    worker.stop()


def slowly_scored_worker(reward_s: float, delay_s: float, groups: int, policy: StalenessPolicy,
                         **options) -> RolloutWorker:
    """A worker whose one reward sleeps `reward_s` a group, `groups` in flight and queued at most."""
    def slow_reward(prompts, completions, **columns):
        time.sleep(reward_s)
        return [1.0] * len(completions)

    counter = itertools.count()
    prompts = PromptSource(lambda: (i := next(counter), f"prompt {i}", [i], {}))
    scorer = Scorer([RewardFunction("slow", 1.0, slow_reward)], on_error=lambda *a: None)
    return RolloutWorker(FakeClient(delay_s=delay_s), prompts, scorer, policy, num_generations=2,
                         max_inflight=groups, queue_maxsize=groups, current_version=lambda: 0, **options).start()


def test_each_finished_groups_generation_and_scoring_seconds_are_measured():
    worker = slowly_scored_worker(0.05, 0.1, 2, StalenessPolicy(1, 2))
    wait_until(lambda: worker.queue_depth == 2)
    window = worker.take_window()
    worker.stop()
    assert window.groups_finished == 2
    assert window.group_generation_s >= 0.1 and window.group_scoring_s >= 0.05
    assert window.metrics()["rollout/group_generation_s"] == window.group_generation_s


def test_polls_while_generation_is_paused_for_a_step_blame_no_bound():
    # Taking turns: the step's groups stay taken (and fill the staleness bound) while the server
    # is paused; that is the pause holding generation back, not the bound.
    worker = make_worker(FakeClient(delay_s=0.001), max_staleness=1, groups_per_step=2).start()
    wait_until(lambda: worker.queue_depth == 2)
    assert worker.take(timeout_s=1) is not None and worker.take(timeout_s=1) is not None
    worker.take_window()
    with worker.generation_paused():
        time.sleep(0.3)
        worker.free_taken_slots()  # the refill goes to the paused server
        time.sleep(0.1)
    paused = worker.take_window()
    time.sleep(0.2)
    after = worker.take_window()
    worker.stop()
    assert paused.paused_polls > 0 and paused.polls == paused.held_by_staleness == 0
    assert paused.metrics()["async/paused_share"] == 1.0 and "async/blocked_by_staleness" not in paused.metrics()
    assert after.paused_polls == 0 and after.polls > 0  # counted against the bounds again once resumed


def test_scoring_seconds_are_measured_with_and_without_the_wait_for_a_scoring_thread():
    worker = slowly_scored_worker(0.1, 0.01, 4, StalenessPolicy(4, 1), scoring_threads=1)
    wait_until(lambda: worker.queue_depth == 4)
    window = worker.take_window()
    worker.stop()
    # One thread, four groups generated at once: they queue for it, 0.15 s on average.
    assert window.groups_finished == 4 and 0.1 <= window.group_scoring_busy_s < window.group_scoring_s
    assert window.group_latency_s < window.group_generation_s + window.group_scoring_s
