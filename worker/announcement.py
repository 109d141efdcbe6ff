"""What a live worker answers when the control plane asks the fleet (worker/inspection.py sends it,
runs/fleet/ reads it): the queues it consumes, the runs it is busy with, its devices and, for a
pool that is a Ray cluster, the cluster's machines.

Plain data with a JSON form, shared by both sides like the config schema, so that the two
cannot drift apart.
"""
from dataclasses import dataclass

from worker.cluster_view import ClusterView
from worker.devices import Devices


@dataclass(frozen=True)
class BusyRun:
    run_id: int
    since: float | None  # when its task started, in seconds since the epoch (the worker's clock)

    def to_dict(self) -> dict:
        return {"run_id": self.run_id, "since": self.since}

    @classmethod
    def from_dict(cls, data: dict) -> "BusyRun":
        since = data.get("since")
        return cls(run_id=int(data["run_id"]), since=None if since is None else float(since))


@dataclass(frozen=True)
class Announcement:
    queues: tuple[str, ...]
    runs: tuple[BusyRun, ...]
    devices: Devices | None  # None while the worker is still looking (the first seconds after it starts)
    cluster: ClusterView | None = None  # None: the worker runs its runs itself, its pool is not a Ray cluster

    def to_dict(self) -> dict:
        """A worker that is not a Ray pool leaves `cluster` out: its answer is the one it gave
        before pools could be clusters, and reads the same on either side."""
        answer = {"queues": list(self.queues), "runs": [run.to_dict() for run in self.runs],
                  "devices": self.devices.to_dict() if self.devices else None}
        return answer if self.cluster is None else {**answer, "cluster": self.cluster.to_dict()}

    @classmethod
    def from_dict(cls, data: dict) -> "Announcement":
        """Raises KeyError, TypeError or ValueError on an answer that is not an announcement."""
        devices, cluster = data.get("devices"), data.get("cluster")
        return cls(queues=tuple(str(queue) for queue in data["queues"]),
                   runs=tuple(BusyRun.from_dict(run) for run in data.get("runs", [])),
                   devices=Devices.from_dict(devices) if devices else None,
                   cluster=ClusterView.from_dict(cluster) if cluster else None)
