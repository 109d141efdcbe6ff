"""vLLM's tensor and data parallel flags on GPUs, and the sizes refused with their reason."""
import pytest

from worker.trainer.config import TrainingConfig
from worker.trainer.inference.launch import build_launch
from worker.trainer.inference.parallelism import ParallelismRefused, parallel_args, parallel_refusal


def config(tp=1, dp=1, **knobs):
    return TrainingConfig(vllm_tensor_parallel_size=tp, vllm_data_parallel_size=dp, **knobs)


def option(argv, name):
    return argv[argv.index(name) + 1]


def test_sizes_of_one_add_no_flags_anywhere():
    for device in ("cpu", "cuda"):
        argv = build_launch("m", config(), port=1, device=device, environ={}).argv
        assert not {"--tensor-parallel-size", "--data-parallel-size", "--api-server-count"} & set(argv)


def test_tensor_parallel_on_gpus():
    launch = build_launch("m", config(tp=2), port=1, device="cuda", gpu_ids="0,1", environ={})
    assert option(launch.argv, "--tensor-parallel-size") == "2"
    assert "--data-parallel-size" not in launch.argv and "--api-server-count" not in launch.argv
    assert launch.env["CUDA_VISIBLE_DEVICES"] == "0,1"


def test_data_parallel_on_gpus_behind_one_front_end():
    launch = build_launch("m", config(tp=2, dp=2, weight_sync_backend="nccl"), port=1, device="cuda",
                          gpu_ids="4,5,6,7", environ={})
    assert option(launch.argv, "--tensor-parallel-size") == "2"
    assert option(launch.argv, "--data-parallel-size") == "2"
    # one HTTP front end: vLLM would refuse runtime LoRA updates behind several
    assert option(launch.argv, "--api-server-count") == "1"
    assert "--weight-transfer-config" in launch.argv
    assert launch.env["CUDA_VISIBLE_DEVICES"] == "4,5,6,7"


def test_extra_arguments_still_go_last():
    launch = build_launch("m", config(tp=2), port=1, device="cuda", gpu_ids="0,1", environ={},
                          extra_args=["--tensor-parallel-size", "1"])
    assert launch.argv[-2:] == ["--tensor-parallel-size", "1"]  # vLLM takes the last one given


@pytest.mark.parametrize(("tp", "dp"), [(2, 1), (1, 2)])
def test_a_cpu_server_refuses_either_size_above_one(tp, dp):
    with pytest.raises(ParallelismRefused, match=rf"vllm_tensor_parallel_size {tp} × vllm_data_parallel_size {dp} "
                                                 rf"splits vLLM over 2 GPUs; this server runs on a CPU"):
        build_launch("m", config(tp=tp, dp=dp), port=1, device="cpu", environ={}, cpus=[0, 1])


def test_more_gpus_than_the_server_is_given_is_refused_with_the_numbers():
    with pytest.raises(ParallelismRefused, match=r"needs 4 GPUs for vLLM; it is given 2 \(CUDA_VISIBLE_DEVICES=0,1\)"):
        build_launch("m", config(tp=4), port=1, device="cuda", gpu_ids="0,1", environ={})
    inherited = {"CUDA_VISIBLE_DEVICES": "3"}
    with pytest.raises(ParallelismRefused, match="it is given 1"):
        build_launch("m", config(dp=2), port=1, device="cuda", environ=inherited)


def test_unknown_gpus_are_left_to_vllm_to_count():
    assert parallel_refusal(config(tp=8), "cuda") is None
    assert parallel_args(config(tp=8), "cuda") == ["--tensor-parallel-size", "8"]
