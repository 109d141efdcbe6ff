"""A served judge's vLLM server that ends during a run is named, with its last output, so the run
fails saying so instead of training on rewards its judges could no longer give."""
import sys
import time

import pytest

from worker.trainer.config import TrainingConfig
from worker.trainer.inference.launch import Launch
from worker.trainer.inference.server import VLLMServer
from worker.trainer.rewards.judges.served import JudgeServerLost, ServedJudges


def server(tmp_path, code: str) -> VLLMServer:
    """A process standing in for a judge's vLLM server, running `code`."""
    launch = Launch(argv=[sys.executable, "-c", code], env={}, host="127.0.0.1", port=9)
    return VLLMServer(launch, log_path=tmp_path / "vllm-judge-1.log").start()


def wait_for_exit(process: VLLMServer) -> None:
    deadline = time.monotonic() + 30
    while process.running() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_judge_server_that_ends_is_named_with_how_it_ended_and_its_last_output(tmp_path):
    judges = ServedJudges([], TrainingConfig(), tmp_path)
    dying = server(tmp_path, "print('CUDA out of memory', flush=True); raise SystemExit(3)")
    judges.servers["/models/judge"] = dying
    wait_for_exit(dying)
    time.sleep(0.2)  # its output copied
    failure = judges.failure()
    assert failure.startswith("the served judges' vLLM server for /models/judge exited with code 3")
    assert "CUDA out of memory" in failure and str(tmp_path / "vllm-judge-1.log") in failure
    with pytest.raises(JudgeServerLost, match="exited with code 3"):
        judges.check()


def test_judge_servers_that_run_are_no_failure(tmp_path):
    judges = ServedJudges([], TrainingConfig(), tmp_path)
    judges.servers["/models/judge"] = server(tmp_path, "import time; time.sleep(60)")
    try:
        assert judges.failure() is None
        judges.check()
    finally:
        judges.stop()
