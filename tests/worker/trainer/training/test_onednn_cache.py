"""Shapes are padded only where oneDNN's primitive cache is in play."""
from worker.trainer.training.onednn_cache import CPU_BF16_SHAPE_MULTIPLE, shape_multiple_for


def test_shapes_are_padded_only_for_bf16_on_a_cpu():
    assert shape_multiple_for(training_on_gpu=False, bf16=True) == CPU_BF16_SHAPE_MULTIPLE
    assert shape_multiple_for(training_on_gpu=False, bf16=False) == 1
    assert shape_multiple_for(training_on_gpu=True, bf16=True) == 1
