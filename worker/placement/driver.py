"""Places one run on the Ray cluster and follows it: `python -m worker.placement.driver --spec F`.

A child of the Celery task, so Ray is never initialised in the Celery process (Ray does not
survive the fork of the next task). It asks for one machine with the run's GPUs and CPUs, one more
for each further machine of its trainer and one for each of vLLM's own (a placement group,
gang-placed: all of it or nothing), waits WORKER_RAY_PLACE_TIMEOUT_S at most, runs the run there in
a RunHost actor (a TrainerMachineHost or an InferenceHost on each further machine), and fails the
run in words when the cluster has no room or the machine is lost, or lets in anyone who reaches it
(cluster_door.py) or gives an answer to that question that cannot be read: nothing of the run is
sent to such a cluster unless WORKER_RAY_ALLOW_OPEN_CLUSTER says it is meant. It reports as its own
source, `placement:<attempt>`. The placement group shares this process's fate: a killed driver
frees the machine and stops the run's actor.
"""
import argparse
import logging
import sys
import time
from pathlib import Path

import ray
from ray.exceptions import RayActorError, RayTaskError
from ray.util.placement_group import placement_group, placement_group_table, remove_placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

from worker.placement.cluster_door import door_of, placement_refusal
from worker.placement.host import RunHost
from worker.placement.inference_machines import InferenceHost, InferencePeers
from worker.placement.names import NAMESPACE, machine_name, placement_group_name
from worker.placement.order import PlacementOrder
from worker.placement.plan import NodeRoom, PlacedMachine, machines_for, no_room_message, waiting_message
from worker.placement.trainer_machines import TrainerMachineHost, TrainerPeers
from worker.trainer.checkpoints.run_folder import on_this_worker
from worker.trainer.reporting.session import ReportingSession
from worker.trainer.spec import LaunchSpec

log = logging.getLogger(__name__)
WAIT_STEP_S = 1.0        # how often the waits look at a cancel, the run's result, a dead node
FIRST_WAITING_NOTE_S = 5.0   # a run placed at once says nothing of waiting
WAITING_NOTE_EVERY_S = 60.0
NODE_DEATH_WAIT_S = 30.0  # Ray's health check marks a lost node dead within this (15 s by default)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", required=True, type=Path, help="the placement order (worker/placement/order.py)")
    order = PlacementOrder.read(parser.parse_args(argv).spec)
    outcome = place_and_run(order)
    Path(order.outcome_path).write_text(outcome, encoding="utf-8")
    return 0


def place_and_run(order: PlacementOrder) -> str:
    launch = LaunchSpec.model_validate(order.launch)
    events = Path(on_this_worker(launch).output_dir) / "events"
    report = ReportingSession(launch.ingest, f"placement:{launch.attempt}", events, log_source="placement").start()
    try:
        if not _still_queued(report, launch):
            return "skipped"
        ray.init(address=order.address, namespace=NAMESPACE, logging_level=logging.ERROR)
        try:
            if refusal := _door_refusal(order):
                report.status("failed", refusal)
                return "failed"
            return Placement(order, launch, report).run()
        finally:
            ray.shutdown()
    except Exception as exc:
        log.exception("run %s: placing it on the Ray cluster failed", launch.run_id)
        report.status("failed", f"placing the run on the Ray cluster at {order.address} failed: "
                                f"{type(exc).__name__}: {exc}")
        return "failed"
    finally:
        report.close()


def _door_refusal(order: PlacementOrder) -> str | None:
    """Why nothing of the run may be sent to this cluster: its door open, or not known to be shut."""
    if order.allow_open_cluster:
        return None
    return placement_refusal(door_of(ray.get_runtime_context().gcs_address), order.address, False)


def _still_queued(report: ReportingSession, launch: LaunchSpec) -> bool:
    """False for a redelivered message (the run started, ended or was cancelled): nothing is placed.
    The supervisor asks again on the machine; this spares a placement it would refuse."""
    report.log(f"worker received run {launch.run_id} (attempt {launch.attempt}); finding it a machine")
    report.reporter.flush(timeout_s=60)
    reply = report.reporter.last_reply
    if reply is None:
        raise RuntimeError("the control plane did not answer; not placing a run nobody can follow")
    return reply.status == "queued" and not reply.cancel_requested


class Placement:
    """One run's placement group, its actor, and the watch over both."""

    def __init__(self, order: PlacementOrder, launch: LaunchSpec, report: ReportingSession):
        self.order, self.launch, self.report = order, launch, report
        self.asked = machines_for(launch.config, cluster_has_gpus=ray.cluster_resources().get("GPU", 0) > 0)
        self.group = placement_group(self.asked.resources(), strategy=self.asked.strategy,
                                     name=placement_group_name(launch.run_id, launch.attempt))

    def run(self) -> str:
        try:
            if not self._placed():
                return self._not_placed()
            machines = self._machines()
            self.report.log(f"placed on {machines[0].where()}")
            trainers = len(self.asked.trainer_bundles)
            peers = self._peers(machines[0], machines[1:1 + trainers]) if trainers else None
            inference = self._inference(machines[1 + trainers:]) if self.asked.inference_machines else None
            return self._follow(self._host().run.remote(self.order.launch, self.order.settings,
                                                        self.order.supervisor, peers, inference), machines[0])
        finally:
            remove_placement_group(self.group)

    def _placed(self) -> bool:
        """Waits for the machine, a second at a time so that a cancel stops the wait; a run still
        waiting after a few seconds says so on its page, and again every minute."""
        started = time.monotonic()
        deadline, next_note = started + self.order.place_timeout_s, started + FIRST_WAITING_NOTE_S
        while not self.report.cancel_requested.is_set():
            now = time.monotonic()
            if now >= deadline:
                return False
            if now >= next_note:
                self.report.log(waiting_message(self.launch.run_id, self.asked, self.order.address, free_room(),
                                                now - started, self.order.place_timeout_s))
                next_note = now + WAITING_NOTE_EVERY_S
            if self.group.wait(timeout_seconds=min(WAIT_STEP_S, deadline - now)):
                return True
        return False

    def _not_placed(self) -> str:
        if self.report.cancel_requested.is_set():
            self.report.status("cancelled", "cancelled while waiting for a machine of the Ray cluster")
            return "cancelled"
        rooms = free_room()
        self.report.status("failed", no_room_message(self.launch.run_id, self.asked, self.order.address, rooms,
                                                     self.order.place_timeout_s))
        return "failed"

    def _machines(self) -> list[PlacedMachine]:
        """The machine each of the group's bundles landed on, in bundle order."""
        landed = placement_group_table(self.group)["bundles_to_node_id"]
        nodes = {node["NodeID"]: node for node in ray.nodes()}
        return [PlacedMachine(machine_name(nodes[node_id]), nodes[node_id]["NodeManagerAddress"], node_id)
                for _, node_id in sorted(landed.items())]

    def _in_bundle(self, actor, index: int):
        bundle = self.asked.bundles[index]
        strategy = PlacementGroupSchedulingStrategy(self.group, placement_group_bundle_index=index)
        return actor.options(num_cpus=bundle.cpus, num_gpus=bundle.gpus, scheduling_strategy=strategy)

    def _host(self):
        return self._in_bundle(RunHost, 0).remote()

    def _peers(self, first: PlacedMachine, machines: list[PlacedMachine]) -> TrainerPeers:
        """A host on each further machine of the trainer, handed to the first machine's supervisor."""
        self.report.log("the trainer's further machines: " + ", ".join(
            f"node rank {rank} on {machine.where()}" for rank, machine in enumerate(machines, start=1)))
        hosts = [self._in_bundle(TrainerMachineHost, index).remote(self.order.settings)
                 for index in range(1, len(machines) + 1)]
        return TrainerPeers(hosts, machines, first)

    def _inference(self, machines: list[PlacedMachine]) -> InferencePeers:
        """A host on each of vLLM's machines, handed to the first machine's supervisor, which starts them."""
        self.report.log("vLLM's machines: " + ", ".join(
            f"engine {engine} on {machine.where()}" for engine, machine in enumerate(machines, start=1)))
        first = 1 + len(self.asked.trainer_bundles)
        hosts = [self._in_bundle(InferenceHost, index).remote(self.order.settings)
                 for index in range(first, first + len(machines))]
        return InferencePeers(hosts, machines)

    def _follow(self, outcome, machine: PlacedMachine) -> str:
        """The run's outcome, or `failed` in words when its actor or its machine is gone."""
        while True:
            done, _ = ray.wait([outcome], timeout=WAIT_STEP_S)
            if not done:
                continue
            try:
                return ray.get(outcome)
            except RayActorError as exc:
                return self._failed(self._host_lost(machine, exc))
            except RayTaskError as exc:
                return self._failed(f"the run's host on machine {machine.name} failed: {exc.cause!r}")

    def _host_lost(self, machine: PlacedMachine, error: RayActorError) -> str:
        """The actor is gone: its machine lost (Ray marks the node dead within its health check), or
        the actor alone died (killed, out of memory) on a machine still there."""
        deadline = time.monotonic() + NODE_DEATH_WAIT_S
        while time.monotonic() < deadline:
            if not node_alive(machine.node_id):
                return machine.lost()
            time.sleep(WAIT_STEP_S)
        return f"the run's host on machine {machine.name} died ({type(error).__name__}): {error}"

    def _failed(self, message: str) -> str:
        self.report.status("failed", message)
        return "failed"


def node_alive(node_id: str) -> bool:
    return any(node["NodeID"] == node_id and node["Alive"] for node in ray.nodes())


def free_room() -> list[NodeRoom]:
    """Each machine and what it has free now, for a person deciding what to change."""
    from ray._private.state import available_resources_per_node  # no public per-node view without the dashboard

    free = available_resources_per_node()
    rooms = []
    for node in sorted(ray.nodes(), key=machine_name):
        left = free.get(node["NodeID"], {})
        rooms.append(NodeRoom(machine_name(node), bool(node["Alive"]), left.get("CPU", 0.0), left.get("GPU", 0.0)))
    return rooms


if __name__ == "__main__":
    sys.exit(main())
