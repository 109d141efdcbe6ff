"""What a run asks of a Ray cluster, and the words a run fails with when it cannot be placed or is lost."""
from worker.placement.plan import (
    MachinesAsked,
    NodeRoom,
    PlacedMachine,
    RunBundle,
    bundle_for,
    machines_for,
    no_room_message,
    waiting_message,
)
from worker.trainer.config import TrainingConfig


def test_a_run_of_one_server_gpu_and_one_trainer_process_shares_one_gpu():
    assert bundle_for(TrainingConfig(), cluster_has_gpus=True) == RunBundle(cpus=1, gpus=1)


def test_a_run_over_several_gpus_asks_for_all_of_them_on_one_machine():
    config = TrainingConfig(trainer_processes=2, gradient_accumulation_steps=2)
    assert bundle_for(config, cluster_has_gpus=True).gpus == config.gpus_needed() == 3


def test_a_cpu_only_cluster_is_asked_for_no_gpus():
    bundle = bundle_for(TrainingConfig(trainer_processes=2, gradient_accumulation_steps=2), cluster_has_gpus=False)
    assert bundle.resources() == {"CPU": 1.0}


def test_a_run_not_placed_is_told_what_it_needs_and_what_each_machine_has_free():
    rooms = [NodeRoom("node-a", True, 2, 0), NodeRoom("node-b", True, 0, 1), NodeRoom("node-c", False, 0, 0)]
    message = no_room_message(7, MachinesAsked((RunBundle(cpus=1, gpus=2),)), "10.0.0.5:6379", rooms, waited_s=600)
    assert message.startswith("run 7 needs 1 machine with 2 GPUs and 1 CPU; none was free after 600 s")
    assert message.endswith("The cluster at 10.0.0.5:6379 has: node-a 0 GPUs 2 CPUs free, "
                            "node-b 1 GPU 0 CPUs free, node-c (lost)")


def test_a_lost_machine_is_named_with_its_address_and_ray_node():
    machine = PlacedMachine("node-b", "127.0.0.1", "361c688d0123456789")
    assert machine.lost() == "machine node-b (127.0.0.1, Ray node 361c688d) was lost mid-run"


def test_a_run_still_waiting_is_told_what_it_waits_for_how_long_and_how_to_stop():
    rooms = [NodeRoom("node-a", True, 2, 0), NodeRoom("node-b", True, 0, 1)]
    asked = MachinesAsked((RunBundle(cpus=1, gpus=1),))
    message = waiting_message(7, asked, "10.0.0.5:6379", rooms, waited_s=65.4, timeout_s=600)
    assert message == ("run 7 is waiting for 1 machine with 1 GPU and 1 CPU in the Ray cluster at 10.0.0.5:6379: "
                       "none is free yet (node-a 0 GPUs 2 CPUs free, node-b 1 GPU 0 CPUs free); waited 65 s of "
                       "600 s (WORKER_RAY_PLACE_TIMEOUT_S), cancel to stop waiting")


def test_a_trainer_over_three_machines_asks_for_three_machines_each_of_its_own():
    config = TrainingConfig(trainer_machines=3, trainer_processes=2, gradient_accumulation_steps=6)
    asked = machines_for(config, cluster_has_gpus=True)
    assert asked.bundles == (RunBundle(cpus=1, gpus=3), RunBundle(cpus=1, gpus=2), RunBundle(cpus=1, gpus=2))
    assert asked.strategy == "STRICT_SPREAD"
    assert asked.describe() == ("3 machines: 1 machine with 3 GPUs and 1 CPU (the trainer's first processes and "
                                "vLLM) and 2 more with 2 GPUs and 1 CPU each for the trainer")


def test_vllm_on_machines_of_its_own_asks_one_more_machine_each_after_the_trainers():
    config = TrainingConfig(trainer_machines=2, inference_machines=2, vllm_tensor_parallel_size=4,
                            trainer_processes=2, gradient_accumulation_steps=4)
    asked = machines_for(config, cluster_has_gpus=True)
    assert asked.bundles == (RunBundle(cpus=1, gpus=2), RunBundle(cpus=1, gpus=2),
                             RunBundle(cpus=1, gpus=4), RunBundle(cpus=1, gpus=4))
    assert asked.trainer_bundles == (RunBundle(cpus=1, gpus=2),)
    assert asked.inference_bundles == (RunBundle(cpus=1, gpus=4),) * 2
    assert asked.strategy == "STRICT_SPREAD"
    assert asked.describe() == ("4 machines: 1 machine with 2 GPUs and 1 CPU (the trainer's first processes) and "
                                "1 more with 2 GPUs and 1 CPU each for the trainer and 2 more with 4 GPUs and "
                                "1 CPU each for vLLM")


def test_vllm_on_a_machine_of_its_own_leaves_the_trainers_one_gpu_unshared():
    asked = machines_for(TrainingConfig(inference_machines=1), cluster_has_gpus=True)
    assert asked.bundles == (RunBundle(cpus=1, gpus=1), RunBundle(cpus=1, gpus=1))
    assert asked.trainer_bundles == () and asked.inference_bundles == (RunBundle(cpus=1, gpus=1),)
    assert machines_for(TrainingConfig(inference_machines=1), cluster_has_gpus=False).resources() == [
        {"CPU": 1.0}, {"CPU": 1.0}]


def test_a_run_on_one_machine_is_packed_on_it():
    asked = machines_for(TrainingConfig(), cluster_has_gpus=False)
    assert asked.strategy == "STRICT_PACK" and asked.resources() == [{"CPU": 1.0}]
