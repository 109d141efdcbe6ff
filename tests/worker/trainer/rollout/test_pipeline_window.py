"""The rollout worker's counts between two steps: shares of polls each bound held back, mean
group seconds, taken once (reset), safe to count from one thread while another takes."""
import threading

from worker.trainer.rollout.pipeline_window import INFLIGHT_CAP, QUEUE, STALENESS, PipelineCounters


def test_shares_are_of_all_polls_and_a_poll_with_room_or_only_a_wave_counts_for_no_bound():
    counters = PipelineCounters()
    for held_by in (STALENESS, STALENESS, INFLIGHT_CAP, QUEUE, None, None, None, None):
        counters.polled(held_by)
    metrics = counters.take().metrics()
    assert metrics == {"async/blocked_by_staleness": 0.25, "async/blocked_by_inflight_cap": 0.125,
                       "async/blocked_by_queue": 0.125}


def test_group_seconds_are_means_over_the_groups_finished():
    counters = PipelineCounters()
    counters.group_finished(generation_s=2.0, scoring_s=0.5)
    counters.group_finished(generation_s=4.0, scoring_s=1.5)
    window = counters.take()
    assert window.metrics() == {"rollout/group_generation_s": 3.0, "rollout/group_scoring_s": 1.0}
    assert window.group_latency_s == 4.0


def test_nothing_counted_reports_nothing_rather_than_zeros():
    window = PipelineCounters().take()
    assert window.metrics() == {} and window.group_latency_s is None and window.share_held_by(STALENESS) == 0.0


def test_a_take_resets_the_counts():
    counters = PipelineCounters()
    counters.polled(QUEUE)
    counters.group_finished(1.0, 1.0)
    assert counters.take().polls == 1
    assert counters.take() == PipelineCounters().take()


def test_counts_from_several_threads_are_all_kept():
    counters, threads, polls = PipelineCounters(), 4, 5000
    taken = []

    def count():
        for _ in range(polls):
            counters.polled(INFLIGHT_CAP)

    workers = [threading.Thread(target=count) for _ in range(threads)]
    for worker in workers:
        worker.start()
    taken.append(counters.take())  # a take in the middle loses nothing either
    for worker in workers:
        worker.join()
    taken.append(counters.take())
    assert sum(w.polls for w in taken) == sum(w.held_by_inflight_cap for w in taken) == threads * polls
