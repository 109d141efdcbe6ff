"""The trainer in two CPU processes against a real vLLM, started as the worker starts it
(worker/trainer_process.py: torchrun when trainer_processes is 2), on the tiny model.

- With DDP and with FSDP2 it trains and saves; killed (SIGKILL to the launcher's process group,
  as the worker's stop ends it), no rank is left running; resumed on one process from its last
  checkpoint, it finishes: the steps continue from the checkpoint's, each once, to max_steps,
  and the optimizer state written by two processes is whole in one.
- A rank that dies ends the whole trainer within seconds (torchrun names the rank and how it
  died, which the supervisor turns into the run's reason), and the run resumes from its last
  checkpoint.

Events are read from the trainer's local JSONL outbox (no control plane in the spec). One vLLM
server serves the module's runs: a run that does not resume starts on whatever weights the
previous one pushed, which changes its rollouts, not its step numbers.
"""
import json
import os
import re
import secrets
import signal
import time
from pathlib import Path

import pytest

from tests.support.processes import processes_mentioning
from worker.trainer_process import TrainerProcess, trainer_command

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

MAX_STEPS = 8
SAVE_STEPS = 2
START_S = 240  # a trainer's start on a busy 2-core machine, to its first checkpoint or its end


@pytest.fixture(scope="module")
def vllm(tiny_model_dir, tmp_path_factory):
    from worker.trainer.config import TrainingConfig
    from worker.trainer.inference.launch import new_api_key
    from worker.trainer.inference.server import VLLMServer

    config = TrainingConfig(max_prompt_length=64, max_completion_length=12)
    log_path = tmp_path_factory.mktemp("vllm") / "vllm.log"
    # Keyed as the supervisor starts it: the trainer's every request carries the key.
    with VLLMServer.for_config(str(tiny_model_dir), config, log_path=log_path, api_key=new_api_key()) as server:
        yield server


class Trainers:
    """Starts trainers as the worker does, and leaves none running after the test."""

    def __init__(self, folder: Path, model: Path, server_url: str, server_key: str):
        self.folder, self.model, self.server_url, self.server_key = folder, model, server_url, server_key
        self.output_dir = folder / "out"
        self.started: list[tuple[TrainerProcess, Path]] = []

    def spec(self, attempt: int, distributed: str, processes: int | None, resume_from: Path | None = None) -> dict:
        from worker.trainer.config import TrainingConfig
        from worker.trainer.spec import LaunchSpec

        config = TrainingConfig(model=str(self.model), num_generations=4, per_device_train_batch_size=4,
                                gradient_accumulation_steps=2, max_steps=MAX_STEPS, save_steps=SAVE_STEPS,
                                max_prompt_length=64, max_completion_length=12, learning_rate=5e-3,
                                max_inflight_tasks=8, seed=1, distributed=distributed, trainer_processes=processes)
        return LaunchSpec.model_validate({
            "run_id": 1, "attempt": attempt, "model": str(self.model), "output_dir": str(self.output_dir),
            "dataset": {"kind": "generator", "generator": "arithmetic",
                        "params": {"count": 64, "difficulty": 1, "seed": 0}},
            # A random tiny model never answers; about half its completions start with a space.
            "rewards": [{"name": "format", "kind": "builtin", "builtin": "format", "params": {"regex": "(?s) .*"}}],
            "config": config.model_dump(), "inference_url": self.server_url, "inference_api_key": self.server_key,
            "orders_secret": secrets.token_hex(32),  # the supervisor's, one per attempt
            "resume_from": str(resume_from) if resume_from else None,
        }).model_dump(mode="json")

    def start(self, spec: dict) -> TrainerProcess:
        spec_path = self.folder / f"spec-{spec['attempt']}.json"
        spec_path.write_text(json.dumps(spec))
        argv, env = trainer_command(spec_path, None, spec["config"]["trainer_processes"])
        several = (spec["config"]["trainer_processes"] or 1) > 1
        assert ("worker.trainer.distributed.bound_torchrun" in argv) == several, argv
        trainer = TrainerProcess(argv, env, self.log_path(spec["attempt"]), forward=lambda line: None).start()
        self.started.append((trainer, spec_path))
        return trainer

    def log_path(self, attempt: int) -> Path:
        return self.folder / "logs" / f"trainer-{attempt}.log"

    def log_lines(self, attempt: int) -> list[str]:
        return self.log_path(attempt).read_text(errors="replace").splitlines()

    def events(self, attempt: int) -> list[dict]:
        outbox = self.output_dir / "events" / f"events-trainer-{attempt}.jsonl"
        return [json.loads(line) for line in outbox.read_text().splitlines()]

    def checkpoints(self) -> list[int]:
        """Steps of the complete checkpoints (a killed save leaves a .partial folder)."""
        folders = (self.output_dir / "checkpoints").glob("step-*")
        return sorted(int(f.name.removeprefix("step-")) for f in folders if not f.name.endswith(".partial"))

    def checkpoint(self, step: int) -> Path:
        from worker.trainer.checkpoints.saving import checkpoint_dir

        return checkpoint_dir(self.output_dir, step)

    def running(self, spec_path: Path) -> list[int]:
        """The launcher and every rank: their command lines name the spec."""
        return processes_mentioning(str(spec_path))

    def close(self) -> None:
        for trainer, spec_path in self.started:
            if trainer.exit_code() is None:
                os.killpg(trainer.process.pid, signal.SIGKILL)
            for pid in self.running(spec_path):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def trainers(tmp_path, tiny_model_dir, vllm):
    made = Trainers(tmp_path, tiny_model_dir, vllm.url, vllm.api_key)
    yield made
    made.close()


def wait_until(predicate, timeout_s: float, what: str, trainer: TrainerProcess | None = None, poll_s: float = 0.1):
    """Waits for `predicate`; fails early, with its last output, if `trainer` exits meanwhile."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        if trainer is not None and trainer.exit_code() is not None and not predicate():
            output = "\n".join(trainer.tail)
            raise AssertionError(f"the trainer exited ({trainer.exit_code()}) before {what}:\n{output}")
        time.sleep(poll_s)
    tail = "\n".join(trainer.tail) if trainer is not None else ""
    raise AssertionError(f"no {what} within {timeout_s:.0f} s\n{tail}")


def finished(trainer: TrainerProcess, timeout_s: float = START_S) -> int:
    wait_until(lambda: trainer.exit_code() is not None, timeout_s, "exit")
    return trainer.exit_code()


def trained_steps(events: list[dict]) -> list[int]:
    return [e["step"] for e in events if e["type"] == "metrics" and "train/loss" in e["values"]]


def logged(events: list[dict]) -> list[str]:
    return [e["message"] for e in events if e["type"] == "log"]


def statuses(events: list[dict]) -> list[tuple[str, str]]:
    return [(e["status"], e["message"]) for e in events if e["type"] == "status"]


def assert_optimizer_whole_on_one_process(checkpoint: Path, model: Path, step: int, tmp_path: Path) -> None:
    """The optimizer state that two processes wrote (torch.distributed.checkpoint, keyed by
    parameter name) loads into one process's AdamW as the files hold it, every moment of every
    parameter, at the checkpoint's step."""
    import torch
    from torch.distributed.checkpoint.format_utils import dcp_to_torch_save
    from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict

    from worker.trainer.checkpoints.saving import OPTIMIZER_DIR, load_trainer_state
    from worker.trainer.config import TrainingConfig
    from worker.trainer.training.setup import build_training_parts

    parts = build_training_parts(str(model), TrainingConfig(model=str(model), max_steps=MAX_STEPS),
                                 resume_from=str(checkpoint))
    assert load_trainer_state(checkpoint, parts.model, parts.optimizer, parts.scheduler).step == step
    loaded = get_optimizer_state_dict(parts.model, parts.optimizer.optimizer)["state"]
    dcp_to_torch_save(checkpoint / OPTIMIZER_DIR, tmp_path / "optimizer.pt")
    saved = torch.load(tmp_path / "optimizer.pt", weights_only=False)["optimizer"]["state"]
    assert loaded.keys() == saved.keys() == {name for name, _ in parts.model.named_parameters()}
    for name, moments in saved.items():
        assert int(moments["step"]) == int(loaded[name]["step"]) == step, name
        assert moments["exp_avg_sq"].abs().sum() > 0, name  # trained, not the zeros of a fresh optimizer
        for moment in ("exp_avg", "exp_avg_sq"):
            assert torch.equal(loaded[name][moment], moments[moment]), (name, moment)


# The resume on one process: as a run's config leaves it (auto, one process on a CPU), and as
# configured outright.
@pytest.mark.parametrize(("strategy", "resume_distributed", "resume_processes"),
                         [("ddp", "auto", None), ("fsdp2", "none", 1)])
def test_killed_on_two_processes_and_resumed_on_one(trainers, tiny_model_dir, tmp_path, strategy,
                                                    resume_distributed, resume_processes):
    first = trainers.spec(attempt=1, distributed=strategy, processes=2)
    trainer = trainers.start(first)
    wait_until(trainers.checkpoints, START_S, "checkpoint", trainer)
    os.killpg(trainer.process.pid, signal.SIGKILL)  # the launcher's group; each rank leads its own
    assert finished(trainer, 10) == -signal.SIGKILL
    spec_path = trainers.started[-1][1]
    wait_until(lambda: trainers.running(spec_path) == [], 5, "end of every rank")

    killed_at = trainers.checkpoints()[-1]
    assert SAVE_STEPS <= killed_at < MAX_STEPS
    attempt_1 = trainers.events(1)
    assert f"trainer in 2 process(es), distributed={strategy}: as configured" in logged(attempt_1)
    # The ranks died with the launcher: rank 0 did not train on, orphaned, until its next order
    # to the others failed and it reported the run failed itself.
    assert [status for status, _ in statuses(attempt_1)] == ["starting", "running"]
    assert trained_steps(attempt_1)[:killed_at] == list(range(1, killed_at + 1))
    assert any("rank 1 of 2 ready" in line for line in trainers.log_lines(1))
    checkpoint = trainers.checkpoint(killed_at)
    assert_optimizer_whole_on_one_process(checkpoint, tiny_model_dir, killed_at, tmp_path)

    second = trainers.spec(attempt=2, distributed=resume_distributed, processes=resume_processes,
                           resume_from=checkpoint)
    resumed = trainers.start(second)
    assert finished(resumed) == 0, "\n".join(resumed.tail)
    attempt_2 = trainers.events(2)
    assert statuses(attempt_2)[-1] == ("succeeded", f"trained {MAX_STEPS} steps")
    assert f"resumed from {checkpoint} at step {killed_at}" in logged(attempt_2)
    assert trained_steps(attempt_2) == list(range(killed_at + 1, MAX_STEPS + 1))  # none twice, none skipped
    one_process = [line for line in logged(attempt_2) if line.startswith("trainer in")]
    if resume_distributed == "none":
        assert one_process == ["trainer in 1 process(es), distributed=none: as configured"]
    else:  # one process, as by default: nothing to say
        assert one_process == []
    assert trainers.checkpoints()[-1] == MAX_STEPS


RANK_DIED_WITHIN_S = 30


def test_a_rank_that_dies_ends_the_trainer_within_seconds_and_the_run_resumes(trainers):
    from worker.trainer.distributed.launch_failure import first_failure

    first = trainers.spec(attempt=1, distributed="fsdp2", processes=2)
    trainer = trainers.start(first)
    wait_until(trainers.checkpoints, START_S, "checkpoint", trainer)  # training, with a checkpoint to resume
    ready = next(re.search(r"rank 1 of 2 ready \(pid (\d+)\)", line) for line in trainers.log_lines(1)
                 if "rank 1 of 2 ready" in line)
    os.kill(int(ready.group(1)), signal.SIGKILL)
    killed = time.monotonic()
    code = finished(trainer, RANK_DIED_WITHIN_S)
    took = time.monotonic() - killed
    assert code != 0
    spec_path = trainers.started[-1][1]
    wait_until(lambda: trainers.running(spec_path) == [], 10, "end of every rank")
    # What the supervisor makes the run's reason (worker/supervision/endings.py): torchrun's root cause.
    wait_until(lambda: first_failure(trainers.log_lines(1)) is not None, 10, "torchrun's summary")
    assert first_failure(trainers.log_lines(1)).describe() == "the trainer's rank 1 was killed by SIGKILL (signal 9)"
    assert all(status != "succeeded" for status, _ in statuses(trainers.events(1)))
    print(f"the trainer ended {took:.1f} s after its rank 1 was killed")

    last = trainers.checkpoints()[-1]
    resumed = trainers.start(trainers.spec(attempt=2, distributed="fsdp2", processes=2,
                                           resume_from=trainers.checkpoint(last)))
    assert finished(resumed) == 0, "\n".join(resumed.tail)
    attempt_2 = trainers.events(2)
    assert statuses(attempt_2)[-1] == ("succeeded", f"trained {MAX_STEPS} steps")
    assert trained_steps(attempt_2) == list(range(last + 1, MAX_STEPS + 1))
