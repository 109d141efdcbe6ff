"""The worker's reading of its Ray cluster (worker/inspection.py: ClusterProbe): an inspection is
answered at once with the last reading; a new one is read in the background when the last is
older than CLUSTER_REFRESH_S; a worker whose pool is not a Ray cluster announces none."""
import threading

from worker.cluster_view import ClusterNode, ClusterView
from worker.inspection import CLUSTER_REFRESH_S, ClusterProbe

ADDRESS = "10.0.0.1:6379"


class Reader:
    """Stands in for the child process: counts readings, each a view with one more node."""

    def __init__(self):
        self.count = 0
        self.done = threading.Event()

    def __call__(self, address: str) -> ClusterView:
        self.count += 1
        node = ClusterNode(f"node-{self.count}", "ab" * 28, "10.0.0.1", True, 2, 2, 0, 0, 4.0)
        self.done.set()
        return ClusterView(address, (node,))


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def read_once(probe: ClusterProbe, reader: Reader) -> None:
    reader.done.clear()
    probe.latest()
    assert reader.done.wait(10)
    probe._reading.acquire()  # the thread has stored its view and let go of the lock
    probe._reading.release()


def test_a_worker_without_a_ray_address_announces_no_cluster():
    reader = Reader()
    assert ClusterProbe(None, reader=reader).latest() is None
    assert reader.count == 0


def test_the_first_answer_says_the_cluster_is_still_being_read():
    probe = ClusterProbe(ADDRESS, reader=lambda address: threading.Event().wait(30))
    first = probe.latest()
    assert first.address == ADDRESS and first.nodes == () and "still reading" in first.error


def test_a_recent_reading_is_reused_and_an_old_one_read_again():
    reader, clock = Reader(), Clock()
    probe = ClusterProbe(ADDRESS, reader=reader, clock=clock)
    read_once(probe, reader)
    assert probe.latest().nodes[0].name == "node-1"
    clock.now += CLUSTER_REFRESH_S / 2
    assert probe.latest().nodes[0].name == "node-1" and reader.count == 1
    clock.now += CLUSTER_REFRESH_S
    read_once(probe, reader)
    assert reader.count == 2 and probe.latest().nodes[0].name == "node-2"
