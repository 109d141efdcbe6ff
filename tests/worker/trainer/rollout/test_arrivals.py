"""Finished groups come out oldest policy version first, and a version cap leaves younger ones queued."""
import threading
import time

from worker.trainer.rollout.arrivals import OldestFirstQueue
from worker.trainer.rollout.groups import Group


def group(index: int, version: int) -> Group:
    return Group(prompt_index=index, prompt_text="", prompt_ids=[], columns={}, completions=[], model_version=version)


def test_oldest_version_first_then_arrival_order():
    queue = OldestFirstQueue()
    for index, version in [(0, 3), (1, 1), (2, 3), (3, 1)]:
        queue.put(group(index, version))
    assert [queue.take(timeout_s=0).prompt_index for _ in range(4)] == [1, 3, 0, 2]
    assert len(queue) == 0


def test_take_waits_for_a_group_and_gives_up_after_the_timeout():
    queue = OldestFirstQueue()
    assert queue.take(timeout_s=0.05) is None
    threading.Timer(0.05, queue.put, args=[group(7, 0)]).start()
    assert queue.take(timeout_s=5).prompt_index == 7


def test_version_cap_leaves_younger_groups_queued_until_an_old_one_arrives():
    queue = OldestFirstQueue()
    queue.put(group(0, 5))
    started = time.monotonic()
    assert queue.take(timeout_s=0.1, max_version=4) is None
    assert time.monotonic() - started >= 0.1
    threading.Timer(0.05, queue.put, args=[group(1, 2)]).start()
    assert queue.take(timeout_s=5, max_version=4).prompt_index == 1
    assert len(queue) == 1


def test_taken_groups_hold_their_places_until_put_back_discarded_or_released():
    queue = OldestFirstQueue()
    for index in range(4):
        queue.put(group(index, 0))
    _, _, third = (queue.take(timeout_s=0) for _ in range(3))
    assert (len(queue), queue.held) == (1, 4)
    queue.put_back(third)
    queue.discard()
    assert (len(queue), queue.held) == (2, 3)
    queue.release_taken()
    assert queue.held == 2


def test_a_take_still_waiting_holds_no_place():
    queue = OldestFirstQueue()
    waiting = threading.Thread(target=queue.take, kwargs={"timeout_s": 5})
    waiting.start()
    time.sleep(0.1)
    held_while_waiting = queue.held
    queue.put(group(0, 0))
    waiting.join()
    assert held_while_waiting == 0 and queue.held == 1
