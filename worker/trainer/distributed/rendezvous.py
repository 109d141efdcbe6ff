"""Where the processes of a trainer over several machines meet: each machine's cluster address, by
node rank, and the port of the store the first machine's torchrun serves (static rendezvous).

The store and gloo carry no authentication (torch 2.13): the store listens on the first machine's
cluster address alone (bound_torchrun.py), gloo on the interface that holds each machine's, and
the leader's orders are signed (order_codec.py). The network between the machines must still be
one only the lab reaches (docs/deploying/cluster.md).
"""
import socket
from dataclasses import dataclass

import psutil

from worker.trainer.distributed.bound_torchrun import LISTEN_FLAG


@dataclass(frozen=True)
class Rendezvous:
    addresses: tuple[str, ...]  # each machine's cluster address, node rank 0 (the store's host) first
    port: int

    @property
    def machines(self) -> int:
        return len(self.addresses)

    def torchrun_argv(self, python: str, processes: int, node_rank: int) -> list[str]:
        """torchrun for this machine's `processes`, node `node_rank` of the job; the first serves the store."""
        listen = [LISTEN_FLAG, self.addresses[0]] if node_rank == 0 else []
        return [python, "-m", "worker.trainer.distributed.bound_torchrun", *listen,
                "--nnodes", str(self.machines), "--node-rank", str(node_rank), "--nproc-per-node", str(processes),
                "--master-addr", self.addresses[0], "--master-port", str(self.port),
                "--local-addr", self.addresses[node_rank],
                "--monitor-interval", "1"]  # a rank that dies ends the others within a second or so

    def interface_of(self, node_rank: int) -> str:
        """The network interface of this machine that holds its cluster address: where gloo listens
        and sends (GLOO_SOCKET_IFNAME), rather than wherever the host name resolves."""
        return interface_holding(self.addresses[node_rank])


def interface_holding(address: str) -> str:
    for name, entries in psutil.net_if_addrs().items():
        if any(entry.family == socket.AF_INET and entry.address == address for entry in entries):
            return name
    if address.startswith("127."):
        return next(name for name, entries in psutil.net_if_addrs().items()
                    if any(entry.family == socket.AF_INET and entry.address.startswith("127.") for entry in entries))
    raise RuntimeError(f"no network interface of this machine holds its cluster address {address}")


def free_port_on(address: str) -> int:
    """A port free on `address` now, for the store the first machine's torchrun is about to serve."""
    with socket.socket() as probe:
        probe.bind((address, 0))
        return probe.getsockname()[1]
