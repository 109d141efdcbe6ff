import pytest

from worker.trainer.distributed.strategy import DistributedSettingError, choose_strategy

GIB = 2**30


def test_one_process_trains_alone():
    assert choose_strategy("auto", 1, parameters=10**9, lora=False, device_bytes=80 * GIB).strategy == "none"


def test_lora_replicates_whatever_the_model_size():
    assert choose_strategy("auto", 4, parameters=8 * 10**9, lora=True, device_bytes=80 * GIB).strategy == "ddp"


def test_a_model_whose_training_state_fits_half_a_device_replicates():
    choice = choose_strategy("auto", 2, parameters=10**9, lora=False, device_bytes=80 * GIB)  # 15 GiB of state
    assert choice.strategy == "ddp" and "fits half a device" in choice.reason


def test_a_model_too_big_for_half_a_device_is_sharded():
    choice = choose_strategy("auto", 8, parameters=8 * 10**9, lora=False, device_bytes=80 * GIB)  # 119 GiB
    assert choice.strategy == "fsdp2" and "8 processes" in choice.describe(8)


def test_on_a_cpu_auto_replicates():
    assert choose_strategy("auto", 2, parameters=10**9, lora=False, device_bytes=None).strategy == "ddp"


@pytest.mark.parametrize("setting, processes, lora, words", [
    ("fsdp2", 1, False, "at least 2 trainer processes"),
    ("ddp", 1, False, "at least 2 trainer processes"),
    ("none", 2, False, "trains in one process"),
    ("fsdp2", 2, True, "use ddp"),
])
def test_settings_that_cannot_run_are_refused_with_the_reason(setting, processes, lora, words):
    with pytest.raises(DistributedSettingError, match=words):
        choose_strategy(setting, processes, parameters=10**6, lora=lora, device_bytes=None)


def test_a_named_setting_is_taken_as_configured():
    assert choose_strategy("fsdp2", 2, parameters=10**6, lora=False, device_bytes=None).strategy == "fsdp2"


def test_a_reference_model_counts_towards_what_must_fit():
    # 2.5e9 parameters: 37 GiB of training state fits half an 80 GiB device; with a reference, 47 GiB does not.
    alone = choose_strategy("auto", 2, parameters=int(2.5e9), lora=False, device_bytes=80 * GIB)
    with_reference = choose_strategy("auto", 2, parameters=int(2.5e9), lora=False, device_bytes=80 * GIB,
                                     reference=True)
    assert (alone.strategy, with_reference.strategy) == ("ddp", "fsdp2")
