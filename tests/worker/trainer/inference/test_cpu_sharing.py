"""Sharing a CPU with vLLM: which way, which cores, and the trainer's threads around generation."""
import pytest

from worker.trainer.config import TrainingConfig
from worker.trainer.inference.cpu_sharing import CoreHandover, CpuSharingError, generation_cpus, sharing_mode


@pytest.mark.parametrize(("setting", "on_gpu", "cpus", "expected"), [
    ("auto", False, 2, "split_cores"), ("auto", False, 64, "split_cores"), ("auto", False, 1, "take_turns"),
    ("auto", True, 16, "overlap"), ("take_turns", False, 2, "take_turns"), ("overlap", False, 2, "overlap"),
    ("split_cores", True, 16, "split_cores")])
def test_auto_splits_a_cpu_of_two_cores_or_more(setting, on_gpu, cpus, expected):
    assert sharing_mode(setting, on_gpu, cpus) == expected


def test_half_of_the_cores_go_to_vllm_the_last_ones():
    assert generation_cpus(TrainingConfig(), [0, 1], training_on_gpu=False) == [1]
    assert generation_cpus(TrainingConfig(), [3, 0, 2, 1, 4], training_on_gpu=False) == [3, 4]
    assert generation_cpus(TrainingConfig(vllm_cpu_cores=3), list(range(8)), training_on_gpu=False) == [5, 6, 7]


def test_no_cores_are_kept_when_they_are_not_split():
    assert generation_cpus(TrainingConfig(cpu_sharing="take_turns"), [0, 1], training_on_gpu=False) is None
    assert generation_cpus(TrainingConfig(), [0, 1], training_on_gpu=True) is None


def test_a_split_needs_a_core_left_for_the_trainer():
    with pytest.raises(CpuSharingError, match="vllm_cpu_cores"):
        generation_cpus(TrainingConfig(cpu_sharing="split_cores"), [0], training_on_gpu=False)


@pytest.mark.parametrize(("legacy", "expected"), [("on", "take_turns"), ("off", "overlap"), ("auto", "auto")])
def test_configs_saved_with_the_old_pause_knob_still_load(legacy, expected):
    config = TrainingConfig.model_validate({"pause_generation_while_training": legacy, "max_steps": 3})
    assert config.cpu_sharing == expected
    assert "pause_generation_while_training" not in config.model_dump()


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_the_trainer_keeps_off_vllms_cores_while_it_has_work():
    busy, calls, clock = [True], [], FakeClock()
    handover = CoreHandover(lambda: busy[0], all_threads=2, beside_server_threads=1,
                            set_threads=calls.append, clock=clock)
    handover.before_micro_batch()
    clock.now = 1.5
    handover.before_micro_batch()  # still busy: no change asked of torch
    clock.now = 3.0
    busy[0] = False
    handover.before_micro_batch()
    clock.now = 4.0
    assert calls == [1, 2]
    assert handover.step_done() == pytest.approx(3.0)  # the two micro-batches beside generation
    busy[0] = True
    handover.before_micro_batch()
    clock.now = 4.5
    assert calls == [1, 2, 1]
    assert handover.step_done() == pytest.approx(0.5)


def test_nothing_counts_as_beside_generation_when_no_core_is_given_up():
    clock = FakeClock()
    handover = CoreHandover(lambda: True, all_threads=1, beside_server_threads=1, set_threads=lambda n: None,
                            clock=clock)
    handover.before_micro_batch()
    clock.now = 2.0
    assert handover.step_done() == 0.0
