"""Attack: code a run chose (a model's tokenizer, a reward's imports, a tool) reads its process's
environment for the keys to the Ray cluster, the broker or the bucket that its worker holds (a Ray
actor inherits its node's RAY_AUTH_TOKEN). The trainer and vLLM are started, as a run starts them,
on a worker holding them all: neither gets any, and what they need still reaches them."""
import json
import sys
import time

import pytest

from worker.trainer.inference.launch import Launch
from worker.trainer.inference.server import VLLMServer
from worker.trainer_process import TrainerProcess

WORKERS_SECRETS = {
    "RAY_AUTH_TOKEN": "ray-cluster-token", "RAY_AUTH_TOKEN_PATH": "/home/worker/.ray/auth_token",
    "RAY_ADDRESS": "10.0.0.5:6379", "CELERY_BROKER_URL": "redis://:broker-password@10.0.0.9:6379/1",
    "REDIS_URL": "redis://10.0.0.9:6379/0", "DATABASE_URL": "postgres://grpo:db-password@10.0.0.9/grpo",
    "SECRET_KEY": "django-secret", "SECRETS_ENCRYPTION_KEY": "fernet-key", "AWS_SECRET_ACCESS_KEY": "aws-secret",
    "AWS_ACCESS_KEY_ID": "aws-id", "ARTIFACT_STORE_URL": "s3://bucket/prefix", "SOME_QUEUE": "amqp://u:p@mq//",
}
WHAT_A_RUN_NEEDS = {"HF_HOME": "/data/hf", "OMP_PROC_BIND": "close", "DATA_DIR": "/data/grpo",
                    "HTTPS_PROXY": "http://user:pass@proxy:3128", "HF_TOKEN": "hf_reads_gated_models"}
PRINT_ENVIRONMENT = [sys.executable, "-c", "import json, os; print(json.dumps(dict(os.environ)))"]


@pytest.fixture
def worker_environment(monkeypatch):
    for name, value in {**WORKERS_SECRETS, **WHAT_A_RUN_NEEDS}.items():
        monkeypatch.setenv(name, value)


def printed_environment(read_log) -> dict:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        lines = [line for line in read_log().splitlines() if line.startswith("{")]
        if lines:
            return json.loads(lines[-1])
        time.sleep(0.1)
    raise AssertionError("the child printed no environment")


def assert_clean(environment: dict) -> None:
    leaked = sorted(set(WORKERS_SECRETS) & set(environment))
    assert not leaked, f"the run's process was given {leaked}"
    assert not any(value in json.dumps(environment) for value in WORKERS_SECRETS.values())
    assert {name: environment.get(name) for name in WHAT_A_RUN_NEEDS} == WHAT_A_RUN_NEEDS


def test_the_trainer_gets_none_of_the_workers_secrets(worker_environment, tmp_path):
    log = tmp_path / "trainer.log"
    trainer = TrainerProcess(PRINT_ENVIRONMENT, {"CUDA_VISIBLE_DEVICES": "1"}, log, forward=lambda line: None).start()
    trainer.process.wait(timeout=30)
    environment = printed_environment(log.read_text)
    assert_clean(environment)
    assert environment["CUDA_VISIBLE_DEVICES"] == "1" and environment["PYTHONUNBUFFERED"] == "1"


def test_vllm_gets_none_of_the_workers_secrets_but_its_own_key(worker_environment, tmp_path):
    log = tmp_path / "vllm.log"
    launch = Launch(argv=PRINT_ENVIRONMENT, env={"VLLM_API_KEY": "the-runs-own-key"}, host="127.0.0.1",
                    port=1, api_key="the-runs-own-key")
    server = VLLMServer(launch, log_path=log).start()
    server._proc.wait(timeout=30)
    environment = printed_environment(log.read_text)
    assert_clean(environment)
    assert environment["VLLM_API_KEY"] == "the-runs-own-key"

