"""The worker splits its GPUs between the vLLM server and the trainer from the run's config, and
fails the run with the numbers where it has too few."""
import json
from types import SimpleNamespace

import pytest

from tests.support.stub_control_plane import StubControlPlane
from worker.gpu_split import (ON_CPU, GpuSplit, NotEnoughGpus, nvidia_smi_gpus, parse_gpu_list, split_for_device,
                              split_gpus, worker_gpus)
from worker.settings import WorkerSettings
from worker.supervisor import RunSupervisor
from worker.trainer.config import TrainingConfig
from worker.trainer.inference import launch as launch_module
from worker.trainer.spec import LaunchSpec

SIX = ["0", "1", "2", "3", "4", "5"]


def config(tp=1, dp=1, processes=None, judges=0):
    return TrainingConfig(vllm_tensor_parallel_size=tp, vllm_data_parallel_size=dp, trainer_processes=processes,
                          judge_gpus=judges, gradient_accumulation_steps=4)  # which 1, 2 or 4 processes share


class TestSplit:
    def test_the_trainer_takes_as_many_gpus_as_split_a_step_evenly(self):
        one_micro_batch = TrainingConfig(gradient_accumulation_steps=1)
        assert split_gpus(one_micro_batch, ["0", "1", "2", "3"]) == GpuSplit(server=("0",), trainer=("1",))
        assert split_gpus(config(), SIX) == GpuSplit(server=("0",), trainer=("1", "2", "3", "4"))
        six_micro_batches = TrainingConfig(gradient_accumulation_steps=6)
        assert split_gpus(six_micro_batches, SIX) == GpuSplit(server=("0",), trainer=("1", "2", "3"))

    def test_a_gpu_each_by_default(self):
        assert split_gpus(config(), ["0", "1"]) == GpuSplit(server=("0",), trainer=("1",))

    def test_the_server_takes_tensor_times_data_parallel_and_the_trainer_the_rest(self):
        split = split_gpus(config(tp=2, dp=2), SIX)
        assert split.server == ("0", "1", "2", "3") and split.trainer == ("4", "5")
        assert (split.server_ids, split.trainer_ids) == ("0,1,2,3", "4,5")

    def test_trainer_processes_take_that_many_and_leave_the_rest_idle(self):
        assert split_gpus(config(tp=2, processes=2), SIX) == GpuSplit(server=("0", "1"), trainer=("2", "3"))

    def test_the_workers_own_entries_are_kept_as_they_are(self):
        # CUDA_VISIBLE_DEVICES=4,6 (or UUIDs) on the worker: its children must name the same devices.
        assert split_gpus(config(), ["GPU-aaa", "GPU-bbb"]) == GpuSplit(server=("GPU-aaa",), trainer=("GPU-bbb",))

    def test_too_few_gpus_names_the_numbers(self):
        with pytest.raises(NotEnoughGpus) as refused:
            split_gpus(config(tp=2), ["0", "1"])
        assert str(refused.value).startswith(
            "the config needs 3 GPUs (vLLM 2 = tensor parallel 2 × data parallel 1, trainer 1); this worker has 2: 0,1")

    def test_too_few_for_the_trainer_processes(self):
        with pytest.raises(NotEnoughGpus, match=r"needs 5 GPUs \(vLLM 1 = .*, trainer 4\); this worker has 4"):
            split_gpus(config(processes=4), ["0", "1", "2", "3"])

    def test_with_vllm_on_machines_of_its_own_the_trainer_takes_this_machines_gpus(self):
        elsewhere = TrainingConfig(inference_machines=2, vllm_tensor_parallel_size=2, trainer_processes=2,
                                   gradient_accumulation_steps=2)
        assert split_gpus(elsewhere, ["0", "1"]) == GpuSplit(server=(), trainer=("0", "1"))
        assert split_gpus(TrainingConfig(inference_machines=1), ["3"]) == GpuSplit(server=(), trainer=("3",))
        with pytest.raises(NotEnoughGpus) as refused:
            split_gpus(elsewhere, ["0"])
        assert str(refused.value).startswith(
            "the config needs 2 GPUs on the trainer's first machine (trainer 2; vLLM's 2 are on each of its 2 "
            "machine(s)); this worker has 1: 0")

    def test_the_default_config_shares_a_single_gpu_as_before(self):
        # the config the control plane never refuses (runs/fleet/gpu_check.py)
        assert split_gpus(config(), ["3"]) == GpuSplit(server=("3",), trainer=("3",))
        assert split_gpus(config(processes=1), ["3"]) == GpuSplit(server=("3",), trainer=("3",))

    def test_more_than_one_gpus_worth_is_not_shared_unless_the_overrides_say_so(self):
        with pytest.raises(NotEnoughGpus, match="needs 3 GPUs .* has 1: 0 .*WORKER_VLLM_GPUS and WORKER_TRAINER_GPUS"):
            split_gpus(config(tp=2), ["0"])
        with pytest.raises(NotEnoughGpus, match="needs 3 GPUs .* trainer 2"):
            split_gpus(config(processes=2), ["0"])
        both = split_gpus(config(dp=2), ["0", "1"], server_override=["0", "1"], trainer_override=["1"])
        assert both == GpuSplit(("0", "1"), ("1",))

    def test_no_gpus_is_the_cpu_as_before(self):
        assert split_gpus(config(), []) == ON_CPU
        assert (ON_CPU.server_ids, ON_CPU.trainer_ids) == (None, None)


class TestJudges:
    def test_served_judges_take_theirs_after_the_servers_and_before_the_trainers(self):
        split = split_gpus(config(judges=2), SIX)  # 2 of the 3 left split 4 micro-batches evenly
        assert split == GpuSplit(server=("0",), judges=("1", "2"), trainer=("3", "4"))
        assert (split.server_ids, split.judge_ids, split.trainer_ids) == ("0", "1,2", "3,4")
        assert split_gpus(config(tp=2, judges=1, processes=1), SIX) == GpuSplit(("0", "1"), ("3",), ("2",))

    def test_without_gpus_of_their_own_judges_share_the_policy_servers(self):
        split = split_gpus(config(tp=2), SIX)
        assert split.judges == () and split.judge_ids == "0,1"
        assert ON_CPU.judge_ids is None

    def test_too_few_gpus_for_the_judges_names_the_numbers(self):
        with pytest.raises(NotEnoughGpus, match=r"^the config needs 4 GPUs \(vLLM 1 = .*, trainer 1, judges 2\); "
                                                r"this worker has 3: 0,1,2"):
            split_gpus(config(judges=2), ["0", "1", "2"])

    def test_a_single_gpu_is_not_shared_with_judges_of_their_own(self):
        with pytest.raises(NotEnoughGpus, match=r"needs 3 GPUs .*judges 1\); this worker has 1: 0"):
            split_gpus(config(judges=1), ["0"])

    def test_judges_come_from_what_the_overrides_leave(self):
        split = split_gpus(config(judges=1), ["0", "1", "2", "3"], server_override=["3"], trainer_override=["0"])
        assert split == GpuSplit(server=("3",), trainer=("0",), judges=("1",))
        with pytest.raises(NotEnoughGpus, match=r"served judges need 2 GPU\(s\) \(judge_gpus\); besides the vLLM "
                                                r"server's and the trainer's this worker has 1: 1"):
            split_gpus(config(judges=2), ["0", "1", "2"], server_override=["0"], trainer_override=["2"])


class TestOverrides:
    def test_a_server_override_leaves_the_trainer_the_other_gpus(self):
        assert split_gpus(config(), ["0", "1", "2"], server_override=["2"]) == GpuSplit(("2",), ("0", "1"))

    def test_a_trainer_override_leaves_the_server_the_other_gpus(self):
        assert split_gpus(config(tp=2), ["0", "1", "2"], trainer_override=["0"]) == GpuSplit(("1", "2"), ("0",))

    def test_an_override_too_short_for_the_config_names_both(self):
        with pytest.raises(NotEnoughGpus, match=r"vLLM needs 2 GPU\(s\) \(tensor parallel 2 × data parallel 1\); "
                                                r"WORKER_VLLM_GPUS gives 1: 3"):
            split_gpus(config(tp=2), SIX, server_override=["3"])
        with pytest.raises(NotEnoughGpus, match=r"the trainer needs 2 GPU\(s\) \(trainer_processes\); "
                                                r"WORKER_TRAINER_GPUS gives 1: 5"):
            split_gpus(config(processes=2), SIX, trainer_override=["5"])

    def test_the_side_left_over_too_small_says_what_is_left(self):
        with pytest.raises(NotEnoughGpus, match="besides WORKER_VLLM_GPUS this worker has 0: none"):
            split_gpus(config(), ["0", "1"], server_override=["0", "1"])

    def test_a_cpu_build_of_vllm_passes_the_overrides_through_unchecked(self):
        assert split_for_device(config(tp=2), "cpu", SIX) == ON_CPU
        assert split_for_device(config(), "cpu", SIX, trainer_override="1,2") == GpuSplit((), ("1", "2"))
        assert split_for_device(config(), "cuda", SIX) == GpuSplit(("0",), ("1", "2", "3", "4"))
        assert split_for_device(config(), "cuda", SIX, server_override="5") == GpuSplit(("5",), tuple(SIX[:4]))


class TestDiscovery:
    def test_cuda_visible_devices_is_the_list_where_it_is_set(self):
        never = lambda: pytest.fail("nvidia-smi asked although CUDA_VISIBLE_DEVICES is set")  # noqa: E731
        assert worker_gpus({"CUDA_VISIBLE_DEVICES": "2, 3"}, list_gpus=never) == ["2", "3"]
        assert worker_gpus({"CUDA_VISIBLE_DEVICES": ""}, list_gpus=never) == []
        assert worker_gpus({}, list_gpus=lambda: ["0", "1"]) == ["0", "1"]

    def test_cuda_stops_at_the_first_negative_entry(self):
        assert parse_gpu_list("-1") == [] and parse_gpu_list("0,1,-1,2") == ["0", "1"]

    def test_without_cuda_visible_devices_the_gpus_are_those_nvidia_smi_lists(self, monkeypatch):
        from worker import devices

        listed = (devices.Gpu(0, "NVIDIA H100 80GB HBM3", 81559), devices.Gpu(1, "NVIDIA H100 80GB HBM3", 81559))
        monkeypatch.setattr(devices, "gpus_from_nvidia_smi", lambda: listed)
        assert nvidia_smi_gpus() == ["0", "1"]
        monkeypatch.setattr(devices, "gpus_from_nvidia_smi", lambda: None)  # missing, or no driver
        assert nvidia_smi_gpus() == []

    def test_the_worker_settings_carry_what_was_found(self, monkeypatch):
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,2")
        assert WorkerSettings.from_env().gpus == ("1", "2")


def settings(gpus=(), vllm_gpus=None, trainer_gpus=None):
    return WorkerSettings(vllm_gpus=vllm_gpus, trainer_gpus=trainer_gpus, cancel_grace_s=5, log_lines_per_s=100,
                          gpus=tuple(gpus))


def launch_spec(tmp_path, run_config, url="http://cp/api/runs/7/events/"):
    return LaunchSpec.model_validate({
        "run_id": 7, "attempt": 1, "model": "m", "output_dir": str(tmp_path / "out"),
        "dataset": {"kind": "generator", "generator": "arithmetic"},
        "rewards": [{"name": "acc", "kind": "builtin", "builtin": "accuracy"}],
        "config": run_config.model_dump(), "ingest": {"url": url, "token": "t"},
    })


@pytest.fixture
def gpu_build(monkeypatch):
    monkeypatch.setattr(launch_module, "installed_device", lambda: "cuda")


class TestSupervisor:
    def test_the_trainer_gets_its_share(self, tmp_path, monkeypatch, gpu_build):
        from worker.supervision import trainer_launch

        started = {}
        monkeypatch.setattr(trainer_launch, "trainer_command",
                            lambda spec_path, gpus, *rest, **options: started.update(gpus=gpus) or (["trainer"], {}))
        monkeypatch.setattr(trainer_launch, "TrainerProcess",
                            lambda *args, **options: SimpleNamespace(start=lambda: None))
        supervisor = RunSupervisor(launch_spec(tmp_path, config(tp=2)), settings(gpus=["0", "1", "2", "3"]))
        supervisor.servers.here = SimpleNamespace(url="http://127.0.0.1:1", api_key="k")
        supervisor.trainer.start(supervisor.servers.for_trainer(), shared_memory=None)
        assert started["gpus"] == "2,3" and supervisor.gpus.split.server_ids == "0,1"

    def test_the_trainers_spec_says_where_its_served_judges_go(self, tmp_path, monkeypatch, gpu_build):
        from worker.supervision import trainer_launch

        written = []
        monkeypatch.setattr(trainer_launch, "trainer_command", lambda spec_path, *rest, **options: (["trainer"], {}))
        monkeypatch.setattr(trainer_launch, "TrainerProcess",
                            lambda *args, **options: SimpleNamespace(start=lambda: None))
        monkeypatch.setattr(trainer_launch, "write_private", lambda path, text: written.append(json.loads(text)))
        for judges, expected in ((1, "1"), (0, "0")):  # their own GPU, or the policy server's
            supervisor = RunSupervisor(launch_spec(tmp_path, config(judges=judges, processes=1)),
                                       settings(gpus=["0", "1", "2"]))
            supervisor.servers.here = SimpleNamespace(url="http://127.0.0.1:1", api_key="k")
            supervisor.trainer.start(supervisor.servers.for_trainer(), shared_memory=None)
            assert LaunchSpec.model_validate(written[-1]).judge_gpu_ids == expected

    def test_the_overrides_still_decide_where_set(self, tmp_path, gpu_build):
        supervisor = RunSupervisor(launch_spec(tmp_path, config()), settings(gpus=["0", "1"], vllm_gpus="1",
                                                                            trainer_gpus="1"))
        assert supervisor.gpus.split == GpuSplit(("1",), ("1",))

    def test_a_cpu_worker_changes_nothing(self, tmp_path, monkeypatch):
        monkeypatch.setattr(launch_module, "installed_device", lambda: "cpu")
        supervisor = RunSupervisor(launch_spec(tmp_path, config()), settings(gpus=["0"]))
        assert supervisor.gpus.split == ON_CPU

    def test_too_few_gpus_fails_the_run_with_the_numbers_before_anything_starts(self, tmp_path, gpu_build):
        control_plane = StubControlPlane()
        control_plane.status = "queued"
        try:
            supervisor = RunSupervisor(launch_spec(tmp_path, config(tp=2, dp=2), control_plane.url),
                                       settings(gpus=["0", "1"]))
            assert supervisor.run() == "failed"
        finally:
            control_plane.close()
        assert supervisor.servers.here is None and supervisor.trainer.process is None
        events = [json.loads(line) for line in (tmp_path / "out" / "events" / "events-supervisor-1.jsonl").open()]
        failed = [event for event in events if event["type"] == "status" and event["status"] == "failed"]
        assert failed and "the config needs 5 GPUs (vLLM 4 = tensor parallel 2 × data parallel 2, trainer 1); " \
                          "this worker has 2: 0,1" in failed[0]["message"]
