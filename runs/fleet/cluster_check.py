"""A new run's GPUs against the machines of its pool's Ray cluster: a run is placed whole on one
machine (worker/placement/plan.py), so a run that no alive machine could ever hold is refused at
creation, naming each machine's numbers, rather than failed by the worker after its placement
wait. A machine that is only busy is no reason: the run waits in Ray for it to free."""
from runs.fleet.asking import current_fleet
from runs.fleet.gpu_check import spans_several_gpus
from worker.broker import DEFAULT_QUEUE
from worker.cluster_view import ClusterNode, ClusterView
from worker.placement.plan import MachinesAsked, RunBundle, bundle_for, machines_for
from worker.trainer.config import TrainingConfig as ConfigSchema


def pool_clusters(pool: str) -> list[ClusterView]:
    """The readable Ray clusters the live workers of `pool` place runs on, one per address
    (several Celery workers may share a cluster)."""
    clusters = {worker.cluster.address: worker.cluster for worker in current_fleet().on_pool(pool)
                if worker.cluster is not None and worker.cluster.error is None}
    return list(clusters.values())


def holds(node: ClusterNode, bundle: RunBundle) -> bool:
    return node.alive and node.gpus >= bundle.gpus and node.cpus >= bundle.cpus


def cluster_problems(values: dict) -> dict[str, list[str]]:
    """{"worker_pool": [message]} when the pool's live workers place runs on Ray clusters and no
    alive machine of any of them has the GPUs the run asks of one machine; empty otherwise.
    Nothing is asked unless the config spans several GPUs (one GPU, or a CPU, any machine has),
    nor refused for a pool with no Ray cluster (runs/fleet/gpu_check.py checks those), nor for a
    cluster without GPUs (its runs are placed on CPUs)."""
    config = ConfigSchema.model_construct(**values)
    if config.machines_asked():
        return _machines_problems(config, values.get("worker_pool") or DEFAULT_QUEUE)
    if not spans_several_gpus(config):
        return {}
    pool = values.get("worker_pool") or DEFAULT_QUEUE
    clusters = [cluster for cluster in pool_clusters(pool) if any(node.gpus for node in cluster.alive_nodes)]
    if not clusters:
        return {}
    bundle = bundle_for(config, cluster_has_gpus=True)
    if any(holds(node, bundle) for cluster in clusters for node in cluster.nodes):
        return {}
    machines = "; ".join(f"at {cluster.address}: {machines_text(cluster)}" for cluster in clusters)
    return {"worker_pool": [f"{config.gpus_needed_reason()}, all on one machine; no alive machine of the Ray "
                            f"cluster of pool {pool!r} has them ({machines})"]}


def counted(number: float, unit: str) -> str:
    return f"{number:g} {unit}" if number == 1 else f"{number:g} {unit}s"


def machines_text(cluster: ClusterView) -> str:
    return ", ".join(f"{node.name} {counted(node.gpus, 'GPU')} {counted(node.cpus, 'CPU')}" if node.alive
                     else f"{node.name} (lost)" for node in cluster.nodes)


def fits(cluster: ClusterView, asked: MachinesAsked) -> bool:
    """Whether the cluster's alive machines could hold every bundle, each on a machine of its own
    (STRICT_SPREAD): a matching of bundles to machines, found by augmenting paths."""
    nodes = cluster.alive_nodes
    holder: dict[int, int] = {}  # node index -> the bundle it holds

    def place(bundle: int, tried: set[int]) -> bool:
        for index, node in enumerate(nodes):
            if index in tried or not holds(node, asked.bundles[bundle]):
                continue
            tried.add(index)
            if index not in holder or place(holder[index], tried):
                holder[index] = bundle
                return True
        return False

    return all(place(bundle, set()) for bundle in range(len(asked.bundles)))


def _machines_problems(config: ConfigSchema, pool: str) -> dict[str, list[str]]:
    """A trainer over several machines against each Ray cluster of the pool (none: not refused here;
    runs/fleet/gpu_check.py refuses a pool whose workers run their runs themselves)."""
    clusters = pool_clusters(pool)
    asked = {cluster.address: machines_for(config, cluster_has_gpus=any(node.gpus for node in cluster.alive_nodes))
             for cluster in clusters}
    if not clusters or any(fits(cluster, asked[cluster.address]) for cluster in clusters):
        return {}
    machines = "; ".join(f"at {cluster.address}: {machines_text(cluster)}" for cluster in clusters)
    needs = asked[clusters[0].address].describe()
    return {"worker_pool": [f"{config.machines_asked()}: the run needs {needs}, each "
                            f"a machine of its own; the Ray cluster of pool {pool!r} has no such machines "
                            f"alive ({machines})"]}
