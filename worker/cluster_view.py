"""What a worker whose pool is a Ray cluster (WORKER_RAY_ADDRESS) sees of that cluster: each
machine, what it has and has free, and which runs hold it.

Read by worker/placement/cluster_probe.py in a child process, announced by the worker
(worker/announcement.py) and shown by the control plane (the Workers page, a run's creation
check). Plain data with a JSON form and no Ray, like worker/devices.py: the control plane
imports it and never Ray.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class ClusterNode:
    name: str  # the machine's name: its grpo-machine label, else its hostname (worker/placement/names.py)
    node_id: str  # Ray's NodeID, hex
    address: str  # the node's IP (NodeManagerAddress)
    alive: bool
    cpus: float
    cpus_free: float
    gpus: float
    gpus_free: float
    memory_gib: float
    runs: tuple[int, ...] = ()  # ids of the runs whose placement groups hold bundles on this node

    def to_dict(self) -> dict:
        return {"name": self.name, "node_id": self.node_id, "address": self.address, "alive": self.alive,
                "cpus": self.cpus, "cpus_free": self.cpus_free, "gpus": self.gpus, "gpus_free": self.gpus_free,
                "memory_gib": self.memory_gib, "runs": list(self.runs)}

    @classmethod
    def from_dict(cls, data: dict) -> "ClusterNode":
        return cls(name=str(data["name"]), node_id=str(data["node_id"]), address=str(data["address"]),
                   alive=bool(data["alive"]), cpus=float(data["cpus"]), cpus_free=float(data["cpus_free"]),
                   gpus=float(data["gpus"]), gpus_free=float(data["gpus_free"]),
                   memory_gib=float(data["memory_gib"]), runs=tuple(int(run) for run in data.get("runs", [])))


@dataclass(frozen=True)
class ClusterView:
    address: str  # the Ray address the worker places runs through
    nodes: tuple[ClusterNode, ...] = ()
    error: str | None = None  # why the cluster could not be read (then there are no nodes)
    # Whether it answers a caller without a token (worker/placement/cluster_door.py): runs are not
    # placed on such a cluster unless the worker allows it. None: not asked, or no answer.
    open_to_anyone: bool | None = None

    @property
    def alive_nodes(self) -> tuple[ClusterNode, ...]:
        return tuple(node for node in self.nodes if node.alive)

    def to_dict(self) -> dict:
        return {"address": self.address, "nodes": [node.to_dict() for node in self.nodes], "error": self.error,
                "open_to_anyone": self.open_to_anyone}

    @classmethod
    def from_dict(cls, data: dict) -> "ClusterView":
        """Raises KeyError, TypeError or ValueError on data that is not a cluster view."""
        error, open_to_anyone = data.get("error"), data.get("open_to_anyone")
        return cls(address=str(data["address"]),
                   nodes=tuple(ClusterNode.from_dict(node) for node in data.get("nodes", [])),
                   error=None if error is None else str(error),
                   open_to_anyone=None if open_to_anyone is None else bool(open_to_anyone))

    @classmethod
    def unreadable(cls, address: str, why: str) -> "ClusterView":
        return cls(address=address, error=why)
