"""The rollout worker's counts between two steps: shares of polls each bound held back (polls
while generation is paused apart), mean group seconds, taken once (reset), safe to count from
one thread while another takes."""
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


def test_polls_while_generation_is_paused_are_counted_apart_and_blamed_on_no_bound():
    counters = PipelineCounters()
    counters.polled(INFLIGHT_CAP)
    counters.polled(None)
    counters.pause(True)
    for held_by in (STALENESS, STALENESS, INFLIGHT_CAP, None, QUEUE, STALENESS):
        counters.polled(held_by)
    counters.pause(False)
    window = counters.take()
    assert (window.polls, window.paused_polls, window.held_by_staleness, window.held_by_queue) == (2, 6, 0, 0)
    assert window.metrics() == {"async/blocked_by_staleness": 0.0, "async/blocked_by_inflight_cap": 0.5,
                                "async/blocked_by_queue": 0.0, "async/paused_share": 0.75}


def test_a_window_paused_throughout_reports_only_its_paused_share():
    counters = PipelineCounters()
    counters.pause(True)
    counters.polled(STALENESS)
    assert counters.take().metrics() == {"async/paused_share": 1.0}
    counters.polled(STALENESS)  # still paused: a take does not resume
    assert counters.take().paused_polls == 1


def test_littles_latency_leaves_out_the_wait_for_a_scoring_thread():
    counters = PipelineCounters()
    counters.group_finished(generation_s=2.0, scoring_s=5.0, scoring_busy_s=1.0)  # 4 s waiting for a thread
    window = counters.take()
    assert window.group_latency_s == 3.0 and window.group_scoring_busy_s == 1.0
    assert window.metrics()["rollout/group_scoring_s"] == 5.0  # the reported scoring seconds keep the wait
