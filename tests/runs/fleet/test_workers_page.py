"""The Workers page (/workers/): the live workers in a table, an empty fleet with what to do, a
broker that is down said plainly, and a link to it from every page."""
from dataclasses import replace

from django.contrib.auth import get_user_model

from runs.training_runs.models import Run, RunStatus
from tests.support.fleet import machine, ray_cluster
from worker.cluster_view import ClusterView


def test_each_worker_shows_its_pools_devices_and_run(logged_in, fleet, run):
    Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)
    fleet.add("celery@gpu-1", queues=("gpu", "default"), gpus=2, runs=(run.pk,))
    fleet.add("celery@cpu-1", queues=("cpu",))
    response = logged_in.get("/workers/")
    html = response.content.decode()
    assert response.status_code == 200
    assert html.index("celery@cpu-1") < html.index("celery@gpu-1")
    assert '<span class="badge">gpu</span>' in html and '<span class="badge">cpu</span>' in html
    assert "GPU 1: NVIDIA H100 80GB HBM3, 80 GiB" in html
    assert "16 CPU cores, 125 GiB RAM" in html
    assert f'href="/runs/{run.pk}/">r1</a>' in html and "idle" in html


def test_another_accounts_run_is_not_named(client, fleet, run):
    client.force_login(get_user_model().objects.create_user("someone", password="someone-pass-123"))
    fleet.add("celery@gpu-1", runs=(run.pk,))
    html = client.get("/workers/").content.decode()
    assert "another account's run" in html and f'href="/runs/{run.pk}/"' not in html and ">r1<" not in html


def test_a_worker_still_probing_or_without_the_command_says_so(logged_in, fleet):
    fleet.add("celery@new", probed=False)
    fleet.add_answer("celery@old", {"error": "KeyError('grpo_announce')"})
    html = logged_in.get("/workers/").content.decode()
    assert "still looking for its devices" in html
    assert "did not announce itself" in html


def test_no_live_worker_says_how_to_start_one(logged_in, fleet):
    html = logged_in.get("/workers/").content.decode()
    assert 'id="no-workers"' in html and "make worker QUEUES=default" in html


def test_a_broker_that_is_down_is_said_plainly(logged_in, broker_down):
    response = logged_in.get("/workers/")
    assert response.status_code == 200
    assert 'id="broker-problem"' in response.content.decode()
    assert "cannot be reached" in response.content.decode()


def test_the_page_needs_a_login(client, fleet):
    assert client.get("/workers/").status_code == 302
    assert fleet.asked == 0


def test_every_page_links_to_it(logged_in):
    assert '<a href="/workers/">Workers</a>' in logged_in.get("/runs/").content.decode()


def test_a_ray_workers_cluster_shows_each_machine_and_the_runs_holding_it(logged_in, fleet, run):
    cluster = ray_cluster(machine("node-a", gpus=4, gpus_free=2, runs=(run.pk,)),
                          machine("node-b", gpus=1, alive=False))
    fleet.add("celery@head", queues=("ray",), cluster=cluster)
    fleet.add("celery@plain", queues=("default",))
    html = logged_in.get("/workers/").content.decode()
    assert html.count('class="card cluster"') == 1 and 'data-cluster-of="celery@head"' in html
    node_a = html[html.index('data-node="node-a"'):html.index('data-node="node-b"')]
    assert "10.0.0.6" in node_a and "alive" in node_a and "8 / 8" in node_a and "2 / 4" in node_a
    assert "62.5 GiB" in node_a and f'href="/runs/{run.pk}/">r1</a>' in node_a
    node_b = html[html.index('data-node="node-b"'):]
    assert "lost" in node_b.split("</tr>")[0]


def test_another_accounts_run_on_a_machine_is_not_named(client, fleet, run):
    client.force_login(get_user_model().objects.create_user("someone", password="someone-pass-123"))
    fleet.add("celery@head", queues=("ray",), cluster=ray_cluster(machine("node-a", runs=(run.pk,))))
    html = client.get("/workers/").content.decode()
    node_a = html[html.index('data-node="node-a"'):]
    assert "another account's run" in node_a and f'href="/runs/{run.pk}/"' not in html


def test_a_cluster_that_could_not_be_read_says_why(logged_in, fleet):
    why = "the Ray cluster at 10.0.0.1:6379 did not answer within 60 s"
    fleet.add("celery@head", queues=("ray",), cluster=ClusterView.unreadable("10.0.0.1:6379", why))
    html = logged_in.get("/workers/").content.decode()
    assert why in html and "cluster-table" not in html


def test_a_cluster_that_lets_anyone_in_is_said_with_what_to_do(logged_in, fleet):
    fleet.add("celery@open", queues=("ray",), cluster=replace(ray_cluster(machine("node-a")), open_to_anyone=True))
    fleet.add("celery@shut", queues=("ray2",), cluster=ray_cluster(machine("node-b"), address="10.0.0.2:6379"))
    html = logged_in.get("/workers/").content.decode()
    assert html.count("data-open-cluster") == 1
    warning = html[html.index("data-open-cluster"):]
    assert "lets in" in warning and "RAY_AUTH_MODE=token" in warning and "WORKER_RAY_ALLOW_OPEN_CLUSTER=1" in warning
    assert html.index('data-cluster-of="celery@open"') < html.index("data-open-cluster") \
        < html.index('data-cluster-of="celery@shut"')
