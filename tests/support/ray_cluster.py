"""A real Ray cluster of one or two nodes on 127.0.0.1, for tests of placing runs on it.

Each node is its own `ray start` with its own --temp-dir (so its processes can be found by
that path and nothing else's are touched: `ray stop` would stop every Ray on the machine,
another test's included) and its own ports, labelled grpo-machine=node-a / node-b as an
operator labels machines. The head's health check is fast (1 s, 3 misses), so a lost node
is noticed in seconds. Teardown kills each node's process tree.

A cluster asks for a token (RAY_AUTH_MODE=token), as the worker requires unless told otherwise
(worker/placement/cluster_door.py): one token for every cluster of the test process, which
`client_env` gives the worker, the driver and the probes. `open_door=True` starts one that asks none.
"""
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

RAY = str(Path(sys.executable).with_name("ray"))
FAST_HEALTH_CHECK = {"RAY_health_check_period_ms": "1000", "RAY_health_check_failure_threshold": "3"}
REPO_ROOT = Path(__file__).resolve().parents[2]
TOKEN = secrets.token_hex(16)  # this test process's clusters'
TOKEN_AUTH = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": TOKEN}
TWO_NODES = ((0, 0), (1, 1))  # (CPUs, GPUs) of node-a (head) and node-b: the placement tests' cluster


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _own_ports(head: bool) -> list[str]:
    """Ports Ray would otherwise take at fixed numbers, which two clusters on a machine share."""
    named = ["--dashboard-agent-listen-port", "--dashboard-agent-grpc-port", "--runtime-env-agent-port",
             "--metrics-export-port"]
    if head:
        named += ["--dashboard-port", "--ray-client-server-port"]
    return [f"{name}={free_port()}" for name in named]


@dataclass
class RayNode:
    name: str
    temp_dir: Path

    def processes(self) -> list[psutil.Process]:
        """The node's processes: those naming its temp dir, and everything they started."""
        mark = str(self.temp_dir)
        found: dict[int, psutil.Process] = {}
        for process in psutil.process_iter(["cmdline"]):
            try:
                if mark in " ".join(process.info["cmdline"] or []):
                    for member in (process, *process.children(recursive=True)):
                        found[member.pid] = member
            except psutil.NoSuchProcess:
                continue
        return list(found.values())

    def raylet_tree(self) -> list[psutil.Process]:
        """The raylet and what it started (the node's workers and actors): what a lost machine loses."""
        for process in self.processes():
            try:
                if Path(process.info["cmdline"][0]).name == "raylet":
                    return [process, *process.children(recursive=True)]
            except (psutil.NoSuchProcess, IndexError, TypeError):
                continue
        return []

    def kill(self, processes: list[psutil.Process] | None = None) -> None:
        doomed = self.processes() if processes is None else processes
        for process in doomed:
            try:
                process.kill()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(doomed, timeout=15)


@dataclass
class RayCluster:
    address: str
    env: dict[str, str] = field(default_factory=dict)  # every node's environment
    nodes: list[RayNode] = field(default_factory=list)

    @property
    def client_env(self) -> dict[str, str]:
        """What a process joining the cluster needs in its environment: the token where it asks one;
        else no token mode (a driver in token mode asks one of the cluster's own processes too)."""
        return TOKEN_AUTH if self.env.get("RAY_AUTH_MODE") == "token" else {"RAY_AUTH_MODE": "disabled"}

    def node(self, name: str) -> RayNode:
        return next(node for node in self.nodes if node.name == name)

    def add_node(self, cpus: int, gpus: int, wait: bool = True) -> RayNode:
        """Starts the next node (node-a, the head, first) and, with `wait`, waits until the cluster
        counts it alive."""
        index = len(self.nodes)
        name = f"node-{'abcdefgh'[index]}"
        node = RayNode(name, Path(tempfile.mkdtemp(prefix=f"ray{index}", dir="/tmp")))
        self.nodes.append(node)
        port = self.address.rsplit(":", 1)[1]
        head = ["--head", f"--port={port}", "--include-dashboard=false"]
        where = head if index == 0 else [f"--address={self.address}"]
        _ray_start([*where, f"--num-cpus={cpus}", f"--num-gpus={gpus}", f"--labels=grpo-machine={name}",
                    *_own_ports(head=index == 0)], node.temp_dir, self.env)
        if wait:
            self.wait_for_alive_nodes()
        return node

    def wait_for_alive_nodes(self) -> None:
        _wait_for_nodes(self, sum(1 for known in self.nodes if known.raylet_tree()))

    def stop(self) -> None:
        for node in reversed(self.nodes):
            node.kill()
            shutil.rmtree(node.temp_dir, ignore_errors=True)


def _ray_start(args: list[str], temp_dir: Path, env: dict) -> None:
    command = [RAY, "start", *args, "--node-ip-address=127.0.0.1", f"--temp-dir={temp_dir}",
               "--object-store-memory=100000000", "--disable-usage-stats"]
    done = subprocess.run(command, env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"ray start failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")


def start_ray_cluster(nodes: tuple[tuple[int, int], ...] = ((1, 0),), env: dict | None = None,
                      unset: tuple[str, ...] = (), open_door: bool = False) -> RayCluster:
    """One node per (CPUs, GPUs) entry, node-a the head. GPUs are declared, not real: Ray counts and
    places them all the same. A short temp dir under /tmp: Ray's sockets live there, and a
    socket's path may not exceed 107 bytes. `unset`: variables the nodes' environment leaves out."""
    door = {"RAY_AUTH_MODE": "disabled"} if open_door else TOKEN_AUTH
    env = {**os.environ, **FAST_HEALTH_CHECK, **(env or {}), **door, "PYTHONPATH": str(REPO_ROOT)}
    env = {name: value for name, value in env.items() if name not in unset}
    cluster = RayCluster(address=f"127.0.0.1:{free_port()}", env=env)
    try:
        for cpus, gpus in nodes:
            cluster.add_node(cpus, gpus, wait=False)
        cluster.wait_for_alive_nodes()
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _wait_for_nodes(cluster: RayCluster, count: int, timeout_s: float = 60) -> None:
    """Until `count` nodes are alive, asked in a child: Ray is never initialised in the test process."""
    probe = ("import ray,sys; ray.init(address=sys.argv[1], logging_level='ERROR'); "
             "print(sum(node['Alive'] for node in ray.nodes()))")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done = subprocess.run([sys.executable, "-c", probe, cluster.address], capture_output=True, text=True,
                              timeout=60, cwd=REPO_ROOT, env=cluster.env)
        if done.returncode == 0 and done.stdout.strip().splitlines()[-1:] == [str(count)]:
            return
        time.sleep(0.5)
    raise RuntimeError(f"the Ray cluster at {cluster.address} did not show {count} alive nodes in {timeout_s} s")
