"""A suggestion the run's pool could not start is not made: one run creation refuses (more GPUs
than any live worker of the pool has: runs/fleet/gpu_check.py), or one the worker refuses at
start (split_cores with no core left for the trainer: worker/trainer/inference/cpu_sharing.py).
Where the pool's workers have not reported their devices, the suggestion stays and says what it
needs. The fleet is stubbed at Celery's broadcast, as tests/runs/fleet does."""
from tests.support.fleet import Workers
from tests.support.made_up_runs import step_of
from tests.support.telemetry import add_steps
from worker.announcement import Announcement
from worker.devices import Devices

SERVER_SLOW = step_of(12.0, 6.0, async__blocked_by_inflight_cap=0.05, async__blocked_by_staleness=0.05,
                      system__generation_tokens_per_s=100, system__training_tokens_per_s=900)


def cpu_worker(fleet: Workers, name: str, pool: str, cores: int) -> None:
    devices = Devices(gpus=(), cpu_cores=cores, memory_mib=16000, source="none")
    fleet.add_answer(name, Announcement(queues=(pool,), runs=(), devices=devices).to_dict())


def suggested(api, run, **config) -> list[dict]:
    run.config = {**run.config, **config}
    run.save(update_fields=["config"])
    add_steps(run, SERVER_SLOW, range(1, 11))
    return api.get(f"/api/runs/{run.pk}/diagnosis/").json()["suggestions"]


def knobs(suggestions) -> list[tuple[str, object]]:
    return [(s["knob"], s["proposed"]) for s in suggestions]


def test_one_more_vllm_engine_is_not_suggested_on_a_pool_of_one_gpu_workers(owner_api, run, fleet):
    fleet.add("celery@gpu-1", queues=("gpu",), gpus=1)
    assert suggested(owner_api, run, worker_pool="gpu") == []


def test_one_more_vllm_engine_is_suggested_where_a_worker_of_the_pool_has_the_gpus(owner_api, run, fleet):
    fleet.add("celery@gpu-1", queues=("gpu",), gpus=1)
    fleet.add("celery@gpu-8", queues=("gpu",), gpus=8)
    assert knobs(suggested(owner_api, run, worker_pool="gpu")) == [("vllm_data_parallel_size", 2)]


def test_split_cores_is_not_suggested_where_the_pools_workers_have_one_core(owner_api, run, fleet):
    cpu_worker(fleet, "celery@small", "cpu", cores=1)
    assert suggested(owner_api, run, worker_pool="cpu", cpu_sharing="take_turns") == []


def test_one_more_vllm_core_is_not_suggested_where_it_leaves_the_trainer_none(owner_api, run, fleet):
    cpu_worker(fleet, "celery@four", "cpu", cores=4)
    assert suggested(owner_api, run, worker_pool="cpu", cpu_sharing="split_cores", vllm_cpu_cores=3) == []


def test_cores_that_fit_a_worker_of_the_pool_are_suggested(owner_api, run, fleet):
    cpu_worker(fleet, "celery@four", "cpu", cores=4)
    cpu_worker(fleet, "celery@sixteen", "cpu", cores=16)
    found = suggested(owner_api, run, worker_pool="cpu", cpu_sharing="split_cores", vllm_cpu_cores=3)
    assert knobs(found) == [("vllm_cpu_cores", 4)]


def test_where_no_worker_reported_its_cores_the_suggestion_says_what_it_needs(owner_api, run, fleet):
    found = suggested(owner_api, run, worker_pool="cpu", cpu_sharing="take_turns")
    assert knobs(found) == [("cpu_sharing", "split_cores")]
    assert "on a machine with at least 2 cores" in found[0]["why"]
