"""Training shapes that repeat, so that oneDNN's primitive cache stops growing.

In bf16 on a CPU, oneDNN compiles a kernel for every matrix shape it meets and keeps up to
1,024; packed micro-batches bring new shapes every step, so memory grew step after step.
Padding rows and head positions to a multiple of 32 leaves a few shapes the cache keeps.
Measured by `python -m bench.train_step`; figures in bench/README.md.
"""

SETTING = "ONEDNN_PRIMITIVE_CACHE_CAPACITY"
DEFAULT_CAPACITY = 1024  # oneDNN's own
CPU_BF16_SHAPE_MULTIPLE = 32


def shape_multiple_for(training_on_gpu: bool, bf16: bool) -> int:
    """What packed rows (and the head's positions) are padded to a multiple of: only bf16 on a
    CPU goes through oneDNN's cache (fp32 uses MKL; GPUs have no such cache), elsewhere padding
    would only cost."""
    return CPU_BF16_SHAPE_MULTIPLE if bf16 and not training_on_gpu else 1
