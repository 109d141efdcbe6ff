"""A new run whose config spans more GPUs than any live worker of its pool has is refused at
creation with the numbers (API and new-run page); what may still run somewhere is not."""
import pytest

from runs.fleet.gpu_check import gpu_problems
from runs.training_runs.models import Run
from worker.trainer.config import DEFAULT_MODEL, TrainingConfig as ConfigSchema

FOUR_BY_TWO = {"vllm_tensor_parallel_size": 2, "vllm_data_parallel_size": 2, "worker_pool": "gpu"}
REFUSAL = ("the config needs 5 GPUs (vLLM 4 = tensor parallel 2 × data parallel 2, trainer 1); "
           "the largest worker on pool 'gpu' has 2")


def values(**knobs) -> dict:
    return ConfigSchema(**knobs).model_dump()


def create(api, dataset, reward, **knobs):
    return api.post("/api/runs/", {"name": "wide", "dataset": dataset.pk, "rewards": [{"reward_function": reward.pk}],
                                   "config": knobs}, format="json")


def test_more_gpus_than_the_largest_worker_of_the_pool_has_is_refused_with_the_numbers(owner_api, fleet, dataset,
                                                                                        reward):
    fleet.add("celery@gpu-1", queues=("gpu",), gpus=2)
    fleet.add("celery@gpu-2", queues=("gpu",), gpus=1)
    fleet.add("celery@big", queues=("other",), gpus=8)  # not on the pool
    response = create(owner_api, dataset, reward, **FOUR_BY_TWO)
    assert response.status_code == 400
    assert response.json() == {"config": {"worker_pool": [REFUSAL]}}
    assert not Run.objects.filter(name="wide").exists()


def test_a_worker_with_enough_gpus_on_the_pool_lets_it_through(owner_api, fleet, dataset, reward):
    fleet.add("celery@gpu-1", queues=("gpu",), gpus=2)
    fleet.add("celery@gpu-8", queues=("gpu",), gpus=8)
    assert create(owner_api, dataset, reward, **FOUR_BY_TWO).status_code == 201


@pytest.mark.parametrize("knobs, needed", [
    ({"trainer_processes": 4, "distributed": "ddp", "gradient_accumulation_steps": 4}, 5),
    ({"vllm_tensor_parallel_size": 2}, 3),
    ({"judge_gpus": 1}, 3),  # the judges' own GPU: never shared with the policy server's
])
def test_trainer_processes_and_tensor_parallel_count_alike(fleet, knobs, needed):
    fleet.add("celery@gpu-1", queues=("gpu",), gpus=2)
    [message] = gpu_problems(values(worker_pool="gpu", **knobs))["worker_pool"]
    assert message.startswith(f"the config needs {needed} GPUs")


def test_the_default_config_never_asks_the_broker(fleet):
    """One server GPU and one trainer process can share a GPU, or run on the CPU."""
    fleet.add("celery@small", queues=("default",), gpus=1)
    assert gpu_problems(values()) == {}
    assert fleet.asked == 0


def test_a_pool_with_no_live_worker_may_get_one_later(fleet):
    fleet.add("celery@gpu-1", queues=("default",), gpus=1)
    assert gpu_problems(values(**FOUR_BY_TWO)) == {}


def test_a_pool_of_cpu_workers_refuses_a_vllm_server_over_several_devices(fleet):
    fleet.add("celery@cpu-1", queues=("cpu",))
    [message] = gpu_problems(values(vllm_tensor_parallel_size=2, worker_pool="cpu"))["worker_pool"]
    assert message == ("the config's vLLM needs 2 GPUs (tensor parallel 2 × data parallel 1); the live workers on "
                       "pool 'cpu' have none (CPU only), where vLLM serves with tensor and data parallel 1")


def test_a_pool_of_cpu_workers_takes_several_trainer_processes_on_its_cores(fleet):
    fleet.add("celery@cpu-1", queues=("cpu",))
    knobs = {"trainer_processes": 2, "distributed": "ddp", "gradient_accumulation_steps": 2, "worker_pool": "cpu"}
    assert gpu_problems(values(**knobs)) == {}


def test_a_worker_still_looking_for_its_devices_is_not_counted(fleet):
    fleet.add("celery@new", queues=("gpu",), probed=False)
    assert gpu_problems(values(**FOUR_BY_TWO)) == {}


def test_a_broker_that_is_down_refuses_nothing(broker_down):
    assert gpu_problems(values(**FOUR_BY_TWO)) == {}


def test_the_new_run_page_shows_the_refusal_next_to_the_pool(logged_in, fleet, dataset, reward, config):
    fleet.add("celery@gpu-1", queues=("gpu",), gpus=2)
    edited = {f"cfg-{name}": str(value) for name, value in config.values.items()
              if name not in ("model", "worker_pool") and not isinstance(value, bool) and value is not None}
    form = {"name": "wide", "dataset": str(dataset.pk), "reward": [str(reward.pk)], f"weight-{reward.pk}": "1",
            "config_template": str(config.pk), "model": DEFAULT_MODEL, "worker_pool": "gpu", "edit_config": "on",
            **edited, "cfg-vllm_tensor_parallel_size": "2", "cfg-vllm_data_parallel_size": "2"}
    response = logged_in.post("/runs/new/", form)
    assert response.status_code == 400
    html = response.content.decode()
    assert 'id="id_worker_pool-error"' in html
    assert REFUSAL.replace("'", "&#x27;") in html
    assert not Run.objects.filter(name="wide").exists()
