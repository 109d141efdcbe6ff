"""What the control plane knows of the fleet after asking it once: typed records, no Celery."""
from dataclasses import dataclass
from datetime import UTC, datetime

from worker.announcement import Announcement, BusyRun
from worker.cluster_view import ClusterView
from worker.devices import Devices


@dataclass(frozen=True)
class LiveWorker:
    name: str  # Celery's node name, "celery@host"
    heard_at: datetime  # when its answer arrived (the control plane's clock): the last time it was heard
    queues: tuple[str, ...] = ()
    runs: tuple[BusyRun, ...] = ()
    devices: Devices | None = None  # None while the worker is still looking, or when its answer had none
    problem: str | None = None  # an answer that is not an announcement (a worker running older code)
    cluster: ClusterView | None = None  # the Ray cluster it places its pool's runs on; None: it runs them itself

    @classmethod
    def from_reply(cls, name: str, body, heard_at: datetime) -> "LiveWorker":
        try:
            announced = Announcement.from_dict(body)
        except (KeyError, TypeError, ValueError, AttributeError):
            error = body.get("error") if isinstance(body, dict) else None
            return cls(name, heard_at, problem=f"it did not announce itself ({error or 'an unexpected answer'}); "
                                               "is it running this version's worker code?")
        return cls(name, heard_at, announced.queues, announced.runs, announced.devices, cluster=announced.cluster)

    def listens_on(self, pool: str) -> bool:
        return pool in self.queues

    @property
    def gpu_count(self) -> int:
        return len(self.devices.gpus) if self.devices else 0


@dataclass(frozen=True)
class Fleet:
    asked_at: datetime
    workers: tuple[LiveWorker, ...] = ()
    broker_problem: str | None = None  # why the broker could not be asked; None when it answered

    @property
    def reachable(self) -> bool:
        return self.broker_problem is None

    def on_pool(self, pool: str) -> list[LiveWorker]:
        return [worker for worker in self.workers if worker.listens_on(pool)]


def epoch_time(seconds: float | None) -> datetime | None:
    """A worker's clock reading (seconds since the epoch) as an aware datetime."""
    return None if seconds is None else datetime.fromtimestamp(seconds, tz=UTC)
