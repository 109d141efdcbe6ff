"""Workers that answer the broker's inspection, stubbed at Celery's broadcast: the `fleet` fixture
puts a `Workers` on the air (`fleet.add(...)` adds a worker); the control plane's own asking,
parsing and remembering run for real. And a Ray cluster's machines as a worker reports them."""
from unittest import mock

import pytest

from runs.fleet import asking
from worker.announcement import Announcement, BusyRun
from worker.broker import ANNOUNCE_COMMAND
from worker.cluster_view import ClusterNode, ClusterView
from worker.devices import Devices, Gpu

H100 = "NVIDIA H100 80GB HBM3"


def devices(gpus: int = 0, name: str = H100) -> Devices:
    return Devices(gpus=tuple(Gpu(index, name, 81559) for index in range(gpus)), cpu_cores=16, memory_mib=128000,
                   source="torch" if gpus else "none")


def machine(name: str, gpus: float = 0, cpus: float = 8, alive: bool = True, runs=(), gpus_free: float | None = None,
            ) -> ClusterNode:
    """One machine of a Ray cluster as a worker's cluster probe reports it."""
    return ClusterNode(name=name, node_id=name.encode().hex().ljust(56, "0"), address=f"10.0.0.{len(name)}",
                       alive=alive, cpus=cpus, cpus_free=cpus if alive else 0, gpus=gpus,
                       gpus_free=(gpus if gpus_free is None else gpus_free) if alive else 0, memory_gib=62.5,
                       runs=tuple(runs))


def ray_cluster(*machines: ClusterNode, address: str = "10.0.0.1:6379") -> ClusterView:
    return ClusterView(address=address, nodes=tuple(machines))


class Workers:
    def __init__(self):
        self.replies: list[dict] = []
        self.asked = 0

    def add(self, name: str, queues=("default",), gpus: int = 0, runs=(), probed: bool = True,
            cluster: ClusterView | None = None) -> None:
        announcement = Announcement(queues=tuple(queues), runs=tuple(BusyRun(run_id, 1764000000.0) for run_id in runs),
                                    devices=devices(gpus) if probed else None, cluster=cluster)
        self.replies.append({name: announcement.to_dict()})

    def add_answer(self, name: str, body) -> None:
        self.replies.append({name: body})

    def broadcast(self, command, *, reply, timeout, connection, callback):
        assert command == ANNOUNCE_COMMAND and reply
        self.asked += 1
        for answer in self.replies:
            callback(answer)
        return list(self.replies)


@pytest.fixture
def fleet():
    workers = Workers()
    asking.forget()
    with mock.patch("controlplane.celery.app.control.broadcast", side_effect=workers.broadcast):
        yield workers
    asking.forget()


