"""Training shapes that repeat, so that oneDNN's primitive cache stops growing.

On a CPU, bf16 matmuls go through oneDNN, which builds a primitive (JIT-compiled kernel and
its buffers) for every matrix shape and keeps up to 1,024 of them
(`ONEDNN_PRIMITIVE_CACHE_CAPACITY`). Packed micro-batches each have their own token count,
so each brought fresh primitives for every layer shape, forward and backward, and the
trainer's memory grew step after step until the cache was full: 3.6 → 4.3 GiB over 15 steps
on a 2-core Xeon with AMX (fp32 goes through MKL and stays flat). Padding the packed rows to
a multiple of 32 tokens, and the positions fed to the vocabulary projection likewise, leaves
a few shapes that the cache keeps. bench/train_step.py (SmolLM2-135M, cpu-demo preset,
oneDNN's default cache), peak RSS after 2 / 10 / 20 steps, s a step:

| padded                         | Xeon with AMX              | AMD EPYC (AVX-512 BF16)    |
| ------------------------------ | -------------------------- | -------------------------- |
| nothing                        | 3.60 / 4.18 / 4.30, 7.01   | 3.50 / 3.94 / 4.03, 12.65  |
| rows                           | 3.41 / 3.53 / 3.56, 6.72   | 3.36 / 3.45 / 3.48, 12.47  |
| rows and head positions (this) | —                          | 3.36 / 3.38 / 3.39, flat   |

Bounding the cache instead (128 entries, what the trainer did before the padding) saved
0.03-0.06 GiB more once the rows were padded and cost 7% of a step on the Xeon, rebuilding
the primitives of shapes seen again: oneDNN's default is left alone. A value set in the
environment still applies (bench/train_step.py sets it per run).
"""

SETTING = "ONEDNN_PRIMITIVE_CACHE_CAPACITY"
DEFAULT_CAPACITY = 1024  # oneDNN's own
CPU_BF16_SHAPE_MULTIPLE = 32


def shape_multiple_for(training_on_gpu: bool, bf16: bool) -> int:
    """What packed rows (and the head's positions) are padded to a multiple of: only bf16 on a
    CPU goes through oneDNN's cache (fp32 uses MKL; GPUs have no such cache), elsewhere padding
    would only cost."""
    return CPU_BF16_SHAPE_MULTIPLE if bf16 and not training_on_gpu else 1
