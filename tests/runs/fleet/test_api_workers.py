"""GET /api/workers/: each live worker with its pools, devices, runs and when it was heard; the
runs of other accounts stay anonymous; a broker that is down is a 503 that says so."""
from runs.training_runs.models import Run
from tests.support.fleet import machine, ray_cluster


def test_each_live_worker_with_its_pools_devices_and_when_it_was_heard(owner_api, fleet):
    fleet.add("celery@gpu-1", queues=("gpu",), gpus=2)
    fleet.add("celery@cpu-1", queues=("default",))
    response = owner_api.get("/api/workers/")
    assert response.status_code == 200
    body = response.json()
    assert body["asked_at"]
    cpu, gpu = body["workers"]
    assert cpu["name"] == "celery@cpu-1" and cpu["queues"] == ["default"] and cpu["runs"] == []
    assert cpu["devices"] == {"kind": "cpu", "gpus": [], "cpu_cores": 16, "memory_mib": 128000, "source": "none"}
    assert gpu["devices"]["kind"] == "gpu" and gpu["devices"]["source"] == "torch"
    assert gpu["devices"]["gpus"][1] == {"index": 1, "name": "NVIDIA H100 80GB HBM3", "memory_mib": 81559}
    assert gpu["heard_at"] and gpu["problem"] is None


def test_a_busy_worker_names_the_run_to_whoever_may_see_it(owner_api, other_api, fleet, run):
    fleet.add("celery@gpu-1", queues=("gpu",), runs=(run.pk,))
    mine = owner_api.get("/api/workers/").json()["workers"][0]["runs"]
    assert mine == [{"id": run.pk, "name": "r1", "since": "2025-11-24T16:00:00Z"}]
    theirs = other_api.get("/api/workers/").json()["workers"][0]["runs"]
    assert theirs == [{"id": None, "name": None, "since": "2025-11-24T16:00:00Z"}]


def test_a_run_gone_from_the_database_is_anonymous_too(owner_api, fleet, run):
    fleet.add("celery@gpu-1", runs=(run.pk,))
    Run.objects.filter(pk=run.pk).delete()
    assert owner_api.get("/api/workers/").json()["workers"][0]["runs"][0]["id"] is None


def test_a_worker_still_looking_for_its_devices_has_none_yet(owner_api, fleet):
    fleet.add("celery@new", probed=False)
    assert owner_api.get("/api/workers/").json()["workers"][0]["devices"] is None


def test_no_live_worker_is_an_empty_list(owner_api, fleet):
    assert owner_api.get("/api/workers/").json()["workers"] == []


def test_a_broker_that_is_down_is_a_503_that_says_so(owner_api, broker_down):
    response = owner_api.get("/api/workers/")
    assert response.status_code == 503
    assert "the broker (redis://:**@127.0.0.1:1/0) cannot be reached" in response.json()["detail"]


def test_the_fleet_needs_a_login(anon_api, fleet):
    assert anon_api.get("/api/workers/").status_code == 401
    assert fleet.asked == 0


def test_the_schema_documents_the_endpoint_and_its_503(owner_api):
    schema = owner_api.get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/workers/"]["get"]
    assert {"200", "503"} <= set(operation["responses"])
    worker = schema["components"]["schemas"]["LiveWorker"]
    assert {"name", "queues", "devices", "runs", "heard_at"} <= set(worker["properties"])


def test_a_ray_worker_lists_its_clusters_machines_with_the_runs_it_may_see(owner_api, other_api, fleet, run):
    cluster = ray_cluster(machine("node-a", gpus=4, gpus_free=2, runs=(run.pk,)), machine("node-b", alive=False))
    fleet.add("celery@head", queues=("ray",), cluster=cluster)
    mine = owner_api.get("/api/workers/").json()["workers"][0]["cluster"]
    assert mine["address"] == "10.0.0.1:6379" and mine["error"] is None and mine["open_to_anyone"] is None
    node_a, node_b = mine["nodes"]
    assert node_a == {"name": "node-a", "node_id": cluster.nodes[0].node_id, "address": "10.0.0.6", "alive": True,
                      "cpus": 8.0, "cpus_free": 8.0, "gpus": 4.0, "gpus_free": 2.0, "memory_gib": 62.5,
                      "runs": [{"id": run.pk, "name": "r1"}]}
    assert node_b["alive"] is False and node_b["runs"] == []
    theirs = other_api.get("/api/workers/").json()["workers"][0]["cluster"]["nodes"][0]["runs"]
    assert theirs == [{"id": None, "name": None}]


def test_a_worker_that_runs_its_runs_itself_has_no_cluster(owner_api, fleet):
    fleet.add("celery@cpu-1")
    assert owner_api.get("/api/workers/").json()["workers"][0]["cluster"] is None
