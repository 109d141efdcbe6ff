"""The vLLM launcher: the command it builds, process supervision, and a real server on a tiny model."""
import importlib.metadata
import json
import os
import subprocess
import sys
import textwrap
import time

import httpx
import pytest

from worker.trainer.config import TrainingConfig
from worker.trainer.inference import launch as launch_module
from worker.trainer.inference.cpu_sharing import SERVER_CPUS_VARIABLE, CpuSharingError
from worker.trainer.inference.worker_extension import EXTENSION_CLASS
from worker.trainer.inference.launch import PROJECT_ROOT, SERVED_MODEL_NAME, Launch, build_launch
from worker.trainer.inference.server import ServerStartError, VLLMServer, free_port, group_members


def option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


class TestApiKeyAndModel:
    def test_the_key_reaches_vllm_through_its_environment_and_guards_every_path(self):
        launch = build_launch("/models/m", TrainingConfig(), port=8123, device="cpu", environ={}, api_key="s3cret")
        assert launch.env["VLLM_API_KEY"] == "s3cret" and launch.api_key == "s3cret"
        assert not any("s3cret" in arg for arg in launch.argv)  # `ps` shows argv
        assert option(launch.argv, "--middleware") == launch_module.GUARD_MIDDLEWARE

    def test_a_server_that_takes_weights_over_http_puts_its_route_behind_the_key(self):
        launch = build_launch("/models/m", TrainingConfig(), port=8123, device="cpu", environ={}, api_key="s3cret",
                              upload_folder="/dev/shm/grpo-run-7-weights-x")
        middlewares = [arg for previous, arg in zip(launch.argv, launch.argv[1:]) if previous == "--middleware"]
        # Starlette makes the last one added the outer one: the guard sees every request first.
        assert middlewares == [launch_module.UPLOAD_MIDDLEWARE, launch_module.GUARD_MIDDLEWARE]
        assert launch.env["GRPO_WEIGHT_UPLOAD_DIR"] == "/dev/shm/grpo-run-7-weights-x"
        with pytest.raises(ValueError, match="must ask for an API key"):
            build_launch("/models/m", TrainingConfig(), port=8123, device="cpu", environ={}, upload_folder="/x")

    def test_without_a_key_the_server_is_open(self):
        launch = build_launch("/models/m", TrainingConfig(), port=8123, device="cpu", environ={})
        assert "VLLM_API_KEY" not in launch.env and "--middleware" not in launch.argv

    @pytest.mark.parametrize("model", ["--help", "-h", "--config=/etc/passwd"])
    def test_a_model_that_vllm_would_read_as_an_option_is_refused(self, model):
        with pytest.raises(ValueError, match="cannot begin with '-'"):
            build_launch(model, TrainingConfig(), port=8123, device="cpu", environ={})


class TestCpuLaunch:
    def test_the_default_config(self):
        launch = build_launch("/models/m", TrainingConfig(), port=8123, device="cpu", environ={}, dtype="bfloat16")
        argv = launch.argv
        assert argv[:5] == [sys.executable, "-m", "worker.trainer.inference.vllm_cli", "serve", "/models/m"]
        assert (option(argv, "--host"), option(argv, "--port")) == ("127.0.0.1", "8123")
        assert option(argv, "--served-model-name") == SERVED_MODEL_NAME
        assert option(argv, "--max-model-len") == "768"  # 512 prompt + 256 completion
        assert option(argv, "--logprobs-mode") == "processed_logprobs"
        assert option(argv, "--dtype") == "bfloat16"
        assert option(argv, "--seed") == "42"
        assert option(argv, "--worker-extension-cls") == EXTENSION_CLASS  # weight reloads keep tied heads
        assert "--enforce-eager" in argv
        assert "--gpu-memory-utilization" not in argv
        assert launch.env["VLLM_SERVER_DEV_MODE"] == "1"
        assert launch.env["VLLM_CPU_NUM_OF_RESERVED_CPU"] == "0"
        assert launch.env["VLLM_CPU_KVCACHE_SPACE"] == "2"
        assert launch.env[launch_module.WORKER_SPIN_VARIABLE] == "0.1"  # the trainer shares these cores
        assert "CUDA_VISIBLE_DEVICES" not in launch.env
        assert launch.url == "http://127.0.0.1:8123"

    def test_server_settings_come_from_the_config(self):
        config = TrainingConfig(vllm_max_model_len=4096, vllm_kv_cache_gib=6, vllm_enforce_eager=False, seed=7)
        launch = build_launch("m", config, port=1, device="cpu", environ={})
        assert option(launch.argv, "--max-model-len") == "4096"
        assert option(launch.argv, "--seed") == "7"
        assert "--enforce-eager" not in launch.argv
        assert launch.env["VLLM_CPU_KVCACHE_SPACE"] == "6"

    def test_the_wrapper_module_is_importable_from_any_working_directory(self):
        launch = build_launch("m", TrainingConfig(), port=1, device="cpu",
                              environ={"PYTHONPATH": f"/elsewhere:{PROJECT_ROOT}"})
        assert launch.env["PYTHONPATH"].split(":") == [PROJECT_ROOT, "/elsewhere"]

    def test_extra_arguments_go_last(self):
        launch = build_launch("m", TrainingConfig(), port=1, device="cpu", environ={},
                              extra_args=["--max-num-seqs", "32"])
        assert launch.argv[-2:] == ["--max-num-seqs", "32"]


    @pytest.mark.parametrize("bf16_fast, served", [(True, "bfloat16"), (False, "float32")])
    def test_the_served_dtype_is_bf16_only_where_this_cpu_computes_it_fast(self, monkeypatch, bf16_fast, served):
        import worker.trainer.training.precision as precision

        monkeypatch.setattr(precision, "bf16_is_fast", lambda: bf16_fast)
        launch = build_launch("m", TrainingConfig(), port=1, device="cpu", environ={})
        assert option(launch.argv, "--dtype") == served


class TestCpuSplit:
    def test_the_server_is_pinned_to_the_last_half_of_the_cores(self):
        launch = build_launch("m", TrainingConfig(), port=1, device="cpu", environ={}, cpus=[0, 1, 2, 3])
        assert launch.env["VLLM_CPU_OMP_THREADS_BIND"] == "2,3"
        assert launch.env[SERVER_CPUS_VARIABLE] == "2,3"

    def test_the_config_chooses_how_many_cores(self):
        config = TrainingConfig(vllm_cpu_cores=1)
        launch = build_launch("m", config, port=1, device="cpu", environ={}, cpus=[4, 5, 6, 7])
        assert launch.env["VLLM_CPU_OMP_THREADS_BIND"] == "7"

    @pytest.mark.parametrize("config, cpus", [
        (TrainingConfig(cpu_sharing="take_turns"), [0, 1]),
        (TrainingConfig(cpu_sharing="overlap"), [0, 1]),
        (TrainingConfig(), [0]),  # auto on one core takes turns
    ])
    def test_nothing_is_pinned_unless_the_cores_are_split(self, config, cpus):
        launch = build_launch("m", config, port=1, device="cpu", environ={}, cpus=cpus)
        assert "VLLM_CPU_OMP_THREADS_BIND" not in launch.env and SERVER_CPUS_VARIABLE not in launch.env

    def test_a_split_that_leaves_the_trainer_no_core_is_refused_by_name(self):
        config = TrainingConfig(cpu_sharing="split_cores", vllm_cpu_cores=2)
        with pytest.raises(CpuSharingError, match=r"vllm_cpu_cores \(2\) must leave the trainer at least one of the 2"):
            build_launch("m", config, port=1, device="cpu", environ={}, cpus=[0, 1])

    def test_the_wrapper_reads_the_variable_the_launch_sets(self, monkeypatch):
        # A first import of the wrapper patches importlib.metadata.version: undo that after the test.
        monkeypatch.setattr(importlib.metadata, "version", importlib.metadata.version)
        from worker.trainer.inference import vllm_cli

        assert vllm_cli.CPUS_VARIABLE == SERVER_CPUS_VARIABLE

    @pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores to pin to one")
    def test_the_wrapper_pins_its_process_and_what_it_starts(self):
        last = max(os.sched_getaffinity(0))
        check = ("import os, subprocess, sys\n"
                 "from worker.trainer.inference.vllm_cli import pin_to_cpus\n"
                 "pin_to_cpus()\n"
                 "child = 'import os; print(sorted(os.sched_getaffinity(0)))'\n"
                 "print(subprocess.run([sys.executable, '-c', child], capture_output=True, text=True).stdout.strip())")
        child = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120,
                               cwd=PROJECT_ROOT, env={**os.environ, SERVER_CPUS_VARIABLE: str(last)})
        assert child.returncode == 0, child.stderr[-2000:]
        assert child.stdout.strip().splitlines()[-1] == f"[{last}]"


# A model this machine has not prepared: a rank is checked against its layers only where it has
# (the default model, once a slow test prepared it, would refuse ranks above its 192 features).
UNPREPARED = "test-org/not-prepared-here"


class TestLoraLaunch:
    @pytest.mark.parametrize("device", ["cpu", "cuda"])
    @pytest.mark.parametrize("rank, served", [(8, "8"), (12, "16"), (512, "512")])
    def test_a_lora_run_serves_one_adapter_of_at_least_its_rank(self, device, rank, served):
        config = TrainingConfig(model=UNPREPARED, lora=True, lora_r=rank, lora_serving="adapter")
        launch = build_launch("m", config, port=1, device=device, environ={})
        assert "--enable-lora" in launch.argv and option(launch.argv, "--max-lora-rank") == served
        assert option(launch.argv, "--max-loras") == "1"
        assert launch.env["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] == "1"

    @pytest.mark.parametrize("knobs", [{}, {"lora": True, "lora_r": 1024, "lora_serving": "adapter"},
                                       {"lora": True, "lora_serving": "merged"}],
                             ids=["full", "rank-above-512", "merged"])
    def test_no_adapter_serving_without_lora_or_above_the_ranks_vllm_serves_or_for_merged_weights(self, knobs):
        launch = build_launch("m", TrainingConfig(model=UNPREPARED, **knobs), port=1, device="cpu", environ={})
        assert "--enable-lora" not in launch.argv and "VLLM_ALLOW_RUNTIME_LORA_UPDATING" not in launch.env

    @pytest.mark.parametrize("device, adapter", [("cuda", True), ("cpu", False)])
    def test_by_default_gpus_serve_the_adapter_and_cpus_the_merged_weights(self, device, adapter):
        launch = build_launch("m", TrainingConfig(lora=True), port=1, device=device, environ={})
        assert ("--enable-lora" in launch.argv) is adapter


class TestGpuLaunch:
    def test_gpu_memory_share_and_no_cpu_settings(self):
        config = TrainingConfig(vllm_gpu_memory_utilization=0.5)
        launch = build_launch("m", config, port=1, device="cuda", environ={})
        assert option(launch.argv, "--gpu-memory-utilization") == "0.5"
        assert option(launch.argv, "--dtype") == "bfloat16"
        assert not any(name.startswith("VLLM_CPU_") for name in launch.env)
        assert launch.env["VLLM_SERVER_DEV_MODE"] == "1"
        assert launch_module.WORKER_SPIN_VARIABLE not in launch.env  # vLLM's own busy-wait on GPUs
        assert "--weight-transfer-config" not in launch.argv
        assert "CUDA_VISIBLE_DEVICES" not in launch.env
        assert SERVER_CPUS_VARIABLE not in launch.env  # generation and training on separate devices

    def test_cuda_visible_devices_is_passed_through_or_set(self):
        inherited = build_launch("m", TrainingConfig(), port=1, device="cuda", environ={"CUDA_VISIBLE_DEVICES": "3"})
        assert inherited.env["CUDA_VISIBLE_DEVICES"] == "3"
        chosen = build_launch("m", TrainingConfig(), port=1, device="cuda", gpu_ids="0,1",
                              environ={"CUDA_VISIBLE_DEVICES": "3"})
        assert chosen.env["CUDA_VISIBLE_DEVICES"] == "0,1"

    def test_nccl_weight_sync_enables_the_weight_transfer_engine(self):
        config = TrainingConfig(weight_sync_backend="nccl", vllm_enforce_eager=False)
        launch = build_launch("m", config, port=1, device="cuda", environ={})
        assert json.loads(option(launch.argv, "--weight-transfer-config")) == {"backend": "nccl"}
        assert "--enforce-eager" not in launch.argv


class TestVersionLookup:
    def test_the_installed_build_decides_the_device(self, monkeypatch):
        def only(distribution):
            def version(name):
                if name == distribution:
                    return "0.32.0"
                raise importlib.metadata.PackageNotFoundError(name)
            return version

        monkeypatch.setattr(launch_module.metadata, "version", only("vllm-cpu"))
        assert launch_module.installed_device() == "cpu"
        monkeypatch.setattr(launch_module.metadata, "version", only("vllm"))
        assert launch_module.installed_device() == "cuda"
        monkeypatch.setattr(launch_module.metadata, "version", only("nothing"))
        with pytest.raises(launch_module.VLLMNotInstalledError, match="install_trainer_stack"):
            launch_module.installed_device()

    def test_the_wrapper_answers_vllm_with_the_vllm_cpu_version(self, monkeypatch):
        # Importing the wrapper patches importlib.metadata.version; undo that after the test.
        monkeypatch.setattr(importlib.metadata, "version", importlib.metadata.version)
        from worker.trainer.inference import vllm_cli

        def real_version(name):
            if name == "vllm-cpu":
                return "0.32.0"
            raise importlib.metadata.PackageNotFoundError(name)

        monkeypatch.setattr(vllm_cli, "_real_version", real_version)
        assert vllm_cli._version("vllm") == "0.32.0+cpu"
        assert vllm_cli._version("vllm-cpu") == "0.32.0"
        with pytest.raises(importlib.metadata.PackageNotFoundError):
            vllm_cli._version("something-else")


class TestWorkerSpin:
    def test_the_wrapper_reads_the_variable_the_launch_sets(self):
        from worker.trainer.inference import vllm_cli

        assert vllm_cli.SPIN_VARIABLE == launch_module.WORKER_SPIN_VARIABLE

    def test_the_variable_bounds_vllms_worker_busy_wait(self, trainer_stack):
        # In a child: the bound changes a vLLM class for the whole process, as in the server.
        check = ("import worker.trainer.inference.vllm_cli\n"
                 "from vllm.distributed.device_communicators.shm_broadcast import SpinCondition\n"
                 "print(SpinCondition.__init__.__defaults__)")
        for environ, expected in (({launch_module.WORKER_SPIN_VARIABLE: "0.1"}, "(0.1,)"), ({}, "(1,)")):
            child = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120,
                                   cwd=PROJECT_ROOT, env={**os.environ, **environ})
            assert child.returncode == 0, child.stderr[-2000:]
            assert child.stdout.strip().splitlines()[-1] == expected


FAKE_SERVER = textwrap.dedent("""
    import http.server, signal, subprocess, sys
    mode, port = sys.argv[1], int(sys.argv[2])
    print("starting fake server", flush=True)
    if mode == "die":
        print("ValueError: no such model", flush=True)
        sys.exit(3)
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])  # like vLLM's engine process
    print("ready", flush=True)
    if mode in ("hang", "stubborn"):
        signal.pause()

    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/health" else 404)
            self.end_headers()

        def log_message(self, *args):
            pass

    http.server.HTTPServer(("127.0.0.1", port), Health).serve_forever()
""")


@pytest.fixture
def fake_server(tmp_path):
    script = tmp_path / "fake_server.py"
    script.write_text(FAKE_SERVER)
    servers = []

    def make(mode: str, **kwargs) -> VLLMServer:
        port = free_port()
        launch = Launch(argv=[sys.executable, str(script), mode, str(port)], env={}, host="127.0.0.1", port=port)
        servers.append(VLLMServer(launch, log_path=tmp_path / f"{mode}.log", **kwargs))
        return servers[-1]

    yield make
    for server in servers:
        server.stop(grace_s=1.0)


class TestSupervision:
    def test_a_healthy_server_is_stopped_with_its_whole_process_group(self, fake_server):
        with fake_server("serve") as server:
            pgid = server.pid
            assert len(group_members(pgid)) == 2
            assert httpx.get(server.url + "/health").status_code == 200
        assert group_members(pgid) == []
        assert not server.running()
        assert "starting fake server" in server.log_path.read_text()

    def test_a_server_that_dies_reports_its_last_output(self, fake_server):
        server = fake_server("die").start()
        with pytest.raises(ServerStartError, match="exited with code 3") as error:
            server.wait_until_healthy(timeout_s=30)
        assert "ValueError: no such model" in str(error.value)
        assert error.value.output_tail[-1] == "ValueError: no such model"

    def test_a_server_that_never_answers_is_stopped_at_the_timeout(self, fake_server):
        server = fake_server("hang").start()
        started = time.monotonic()
        with pytest.raises(ServerStartError, match="did not answer /health within 1 s"):
            server.wait_until_healthy(timeout_s=1.0)
        assert time.monotonic() - started < 10
        assert group_members(server.pid) == []

    def test_the_time_health_first_answered_is_noted_once_from_a_thread(self, fake_server):
        noted = []
        with fake_server("serve") as server:
            server.when_healthy(noted.append).join(30)
        assert len(noted) == 1 and 0 < noted[0] < 30

    def test_a_server_that_dies_before_answering_is_never_noted_ready(self, fake_server):
        noted = []
        server = fake_server("die").start()
        server.when_healthy(noted.append).join(30)
        assert noted == [] and server.exit_code() == 3

    def test_a_server_that_ignores_sigterm_is_killed(self, fake_server):
        server = fake_server("stubborn").start()
        deadline = time.monotonic() + 30
        while "ready" not in server.output_tail() and time.monotonic() < deadline:
            time.sleep(0.05)
        pgid = server.pid
        assert server.stop(grace_s=1.0) == -9
        assert group_members(pgid) == []
        assert server.stop() == -9  # a second stop signals nobody


class TestRealServer:
    """vLLM itself on the tiny model (about 30 s, most of it vLLM's start, through the CLI wrapper)."""

    def test_it_serves_completions_with_token_ids_and_logprobs_then_stops(self, tiny_model_dir, tmp_path):
        config = TrainingConfig(max_prompt_length=64, max_completion_length=16, vllm_kv_cache_gib=1)
        server = VLLMServer.for_config(str(tiny_model_dir), config, log_path=tmp_path / "vllm.log")
        with server:
            pgid = server.pid
            reply = httpx.post(server.url + "/v1/completions", timeout=60, json={
                "model": server.served_model_name, "prompt": "What is 7 + 5?", "max_tokens": 8,
                "temperature": 1.0, "logprobs": 0, "return_token_ids": True, "ignore_eos": True,
            })
            assert reply.status_code == 200, reply.text
            choice = reply.json()["choices"][0]
            assert len(choice["token_ids"]) == 8 and all(isinstance(t, int) for t in choice["token_ids"])
            assert len(choice["prompt_token_ids"]) > 0
            assert len(choice["logprobs"]["token_logprobs"]) == 8
            assert all(lp <= 0 for lp in choice["logprobs"]["token_logprobs"])
        assert group_members(pgid) == []
        assert "Starting vLLM server" in server.log_path.read_text()
