"""Shapes are padded only where oneDNN's primitive cache is in play."""
from worker.trainer.onednn_cache import CPU_BF16_SHAPE_MULTIPLE, row_width_multiple


def test_shapes_are_padded_only_for_bf16_on_a_cpu():
    assert row_width_multiple(training_on_gpu=False, bf16=True) == CPU_BF16_SHAPE_MULTIPLE
    assert row_width_multiple(training_on_gpu=False, bf16=False) == 1
    assert row_width_multiple(training_on_gpu=True, bf16=True) == 1
