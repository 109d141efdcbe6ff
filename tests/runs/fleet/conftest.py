"""Workers that answer the broker's inspection, stubbed at Celery's broadcast: `fleet.add(...)` puts
a worker on the air; the control plane's own asking, parsing and remembering run for real."""
from unittest import mock

import pytest
from kombu import Connection

from runs.fleet import asking
from worker.announcement import Announcement, BusyRun
from worker.broker import ANNOUNCE_COMMAND
from worker.devices import Devices, Gpu

H100 = "NVIDIA H100 80GB HBM3"


def devices(gpus: int = 0, name: str = H100) -> Devices:
    return Devices(gpus=tuple(Gpu(index, name, 81559) for index in range(gpus)), cpu_cores=16, memory_mib=128000,
                   source="torch" if gpus else "none")


class Workers:
    def __init__(self):
        self.replies: list[dict] = []
        self.asked = 0

    def add(self, name: str, queues=("default",), gpus: int = 0, runs=(), probed: bool = True) -> None:
        announcement = Announcement(queues=tuple(queues), runs=tuple(BusyRun(run_id, 1764000000.0) for run_id in runs),
                                    devices=devices(gpus) if probed else None)
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


@pytest.fixture
def broker_down():
    """The control plane's broker is a Redis that is not there (a closed port): a real refusal."""
    asking.forget()
    with mock.patch("controlplane.celery.app.connection_for_write",
                    side_effect=lambda **_: Connection("redis://:secret@127.0.0.1:1/0")):
        yield
    asking.forget()
