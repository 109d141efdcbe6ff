"""What one account sees of the fleet: every worker (the fleet is shared), but only the runs it may
see by name; another account's run is shown as "busy" and nothing more (runs.accounts.models)."""
from runs.fleet.records import Fleet, LiveWorker, epoch_time
from runs.training_runs.models import Run


def visible_run_names(fleet: Fleet, user) -> dict[int, str]:
    """{run id: name} of the runs the fleet is busy with (on a worker, or holding a machine of a
    worker's Ray cluster) that `user` may see."""
    ids = {run.run_id for worker in fleet.workers for run in worker.runs}
    clusters = [worker.cluster for worker in fleet.workers if worker.cluster]
    ids |= {run_id for cluster in clusters for node in cluster.nodes for run_id in node.runs}
    if not ids:
        return {}
    return dict(Run.objects.visible_to(user).filter(pk__in=ids).values_list("pk", "name"))


def busy_runs(worker: LiveWorker, names: dict[int, str]) -> list[dict]:
    """The runs `worker` is busy with, as the page and the API show them: {"id", "name", "since"},
    id and name None for a run the account may not see (`names`: visible_run_names)."""
    return [{"id": run.run_id if run.run_id in names else None, "name": names.get(run.run_id),
             "since": epoch_time(run.since)} for run in worker.runs]


def cluster_nodes(worker: LiveWorker, names: dict[int, str]) -> list[dict]:
    """The machines of `worker`'s Ray cluster as the page and the API show them: the node's numbers
    and its runs as {"id", "name"}, both None for a run the account may not see. Empty for a
    worker that is not a Ray pool, or whose cluster could not be read (its `error` says why)."""
    if worker.cluster is None:
        return []
    return [{**node.to_dict(), "runs": [{"id": run_id if run_id in names else None, "name": names.get(run_id)}
                                        for run_id in node.runs]} for node in worker.cluster.nodes]
