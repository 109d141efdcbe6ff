"""A new run on a pool that is a Ray cluster: refused at creation when no alive machine of the
cluster has the GPUs the run asks of one machine, with each machine's numbers; let through when
one has them, even busy (the run waits in Ray), and never asked for a one-GPU config."""
from runs.diagnosis.startable import pool_can_start
from runs.fleet.cluster_check import cluster_problems
from runs.fleet.gpu_check import gpu_problems
from runs.training_runs.models import Run
from tests.support.fleet import machine, ray_cluster
from worker.cluster_view import ClusterView
from worker.trainer.config import TrainingConfig as ConfigSchema

TP2 = {"vllm_tensor_parallel_size": 2, "worker_pool": "ray"}  # 3 GPUs: vLLM 2, trainer 1
REFUSAL = ("the config needs 3 GPUs (vLLM 2 = tensor parallel 2 × data parallel 1, trainer 1), all on one machine; "
           "no alive machine of the Ray cluster of pool 'ray' has them (at 10.0.0.1:6379: node-a 2 GPUs 8 CPUs, "
           "node-b 1 GPU 8 CPUs, node-c (lost))")


def values(**knobs) -> dict:
    return ConfigSchema(**knobs).model_dump()


def create(api, dataset, reward, **knobs):
    return api.post("/api/runs/", {"name": "wide", "dataset": dataset.pk, "rewards": [{"reward_function": reward.pk}],
                                   "config": knobs}, format="json")


def small_cluster() -> ClusterView:
    return ray_cluster(machine("node-a", gpus=2), machine("node-b", gpus=1), machine("node-c", gpus=8, alive=False))


def test_a_run_no_alive_machine_can_hold_is_refused_with_each_machines_numbers(owner_api, fleet, dataset, reward):
    fleet.add("celery@head", queues=("ray",), cluster=small_cluster())
    response = create(owner_api, dataset, reward, **TP2)
    assert response.status_code == 400
    assert response.json() == {"config": {"worker_pool": [REFUSAL]}}
    assert not Run.objects.filter(name="wide").exists()


def test_a_machine_with_the_gpus_lets_it_through_even_when_they_are_busy(owner_api, fleet, dataset, reward):
    fleet.add("celery@head", queues=("ray",), cluster=ray_cluster(machine("node-a", gpus=4, gpus_free=0, runs=(9,))))
    assert create(owner_api, dataset, reward, **TP2).status_code == 201


def test_the_head_workers_own_devices_are_not_where_the_run_goes(fleet):
    """The Celery worker on a CPU-only head places runs on the cluster's GPU machines."""
    fleet.add("celery@head", queues=("ray",), gpus=0, cluster=ray_cluster(machine("node-a", gpus=4)))
    assert gpu_problems(values(**TP2)) == {} and cluster_problems(values(**TP2)) == {}
    assert pool_can_start(values(**TP2))


def test_the_startable_check_refuses_what_creation_refuses(fleet):
    fleet.add("celery@head", queues=("ray",), cluster=small_cluster())
    assert not pool_can_start(values(**TP2))


def test_a_one_gpu_config_never_asks_the_fleet(fleet):
    fleet.add("celery@head", queues=("ray",), cluster=ray_cluster(machine("node-a", gpus=0)))
    assert cluster_problems(values(worker_pool="ray")) == {}
    assert fleet.asked == 0


def test_a_pool_without_a_ray_cluster_or_with_an_unreadable_or_cpu_only_one_is_not_refused_here(fleet):
    fleet.add("celery@plain", queues=("plain",), gpus=8)
    fleet.add("celery@unread", queues=("unread",), cluster=ClusterView.unreadable("10.0.0.9:6379", "no answer"))
    fleet.add("celery@cpus", queues=("cpus",), cluster=ray_cluster(machine("node-a"), machine("node-b")))
    for pool in ("plain", "unread", "cpus", "nobody"):
        assert cluster_problems(values(vllm_tensor_parallel_size=2, worker_pool=pool)) == {}


TWO_MACHINES = {"trainer_machines": 2, "gradient_accumulation_steps": 2, "worker_pool": "ray"}


def test_a_trainer_over_more_machines_than_the_cluster_has_alive_is_refused_naming_them(fleet):
    fleet.add("celery@head", queues=("ray",), cluster=small_cluster())
    three = {**TWO_MACHINES, "trainer_machines": 3, "gradient_accumulation_steps": 3}
    assert cluster_problems(values(**three)) == {"worker_pool": [
        "config.trainer_machines is 3: the run needs 3 machines: 1 machine with 1 GPU and 1 CPU (the trainer's "
        "first processes and vLLM) and 2 more with 1 GPU and 1 CPU each for the trainer, each a machine of its own; "
        "the Ray cluster "
        "of pool 'ray' has no such machines alive (at 10.0.0.1:6379: node-a 2 GPUs 8 CPUs, node-b 1 GPU 8 CPUs, "
        "node-c (lost))"]}
    assert cluster_problems(values(**TWO_MACHINES)) == {}  # node-a and node-b


def test_a_trainer_over_several_machines_on_a_pool_of_plain_workers_is_refused(fleet):
    fleet.add("celery@gpu-1", queues=("ray",), gpus=8)
    assert gpu_problems(values(**TWO_MACHINES)) == {"worker_pool": [
        "config.trainer_machines is 2: a run over several machines runs on a pool that is a Ray cluster "
        "(docs/deploying/cluster.md); the 1 live worker(s) on pool 'ray' each run their runs on their own machine"]}


def test_vllm_on_machines_of_its_own_is_matched_to_the_machines_that_hold_it(fleet):
    """Two vLLM servers of 2 GPUs and a one-GPU trainer: node-b (1 GPU) can only take the trainer,
    so the cluster fits only if the matching moves the trainer there; a third server does not fit."""
    fleet.add("celery@head", queues=("ray",), cluster=ray_cluster(
        machine("node-a", gpus=2), machine("node-b", gpus=1), machine("node-c", gpus=2)))
    two = {"inference_machines": 2, "vllm_tensor_parallel_size": 2, "worker_pool": "ray"}
    assert cluster_problems(values(**two)) == {}
    refused = cluster_problems(values(**{**two, "inference_machines": 3}))
    assert refused == {"worker_pool": [
        "config.inference_machines is 3: the run needs 4 machines: 1 machine with 1 GPU and 1 CPU (the trainer's "
        "first processes) and 3 more with 2 GPUs and 1 CPU each for vLLM, each a machine of its own; the Ray "
        "cluster of pool 'ray' has no such machines alive (at 10.0.0.1:6379: node-a 2 GPUs 8 CPUs, node-b 1 GPU "
        "8 CPUs, node-c 2 GPUs 8 CPUs)"]}
