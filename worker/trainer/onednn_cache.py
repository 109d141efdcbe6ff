"""A bound on oneDNN's primitive cache in the trainer process.

On a CPU, bf16 matmuls go through oneDNN, which builds a primitive (JIT-compiled kernel and
its buffers) for every matrix shape and keeps up to 1,024 of them. A training step's shapes
change with every micro-batch (the token count of a packed prompt and its completions), so
each micro-batch adds fresh primitives for every distinct layer shape, forward and backward,
and the trainer's memory grows step after step until the cache is full. Measured on a 2-core
Xeon with AMX (SmolLM2-135M, the cpu-demo preset's micro-batches of 2, the real `train_step`
on GSM8K-sized groups, 30-40 steps; in fp32, which goes through MKL, flat at 3.22 GiB):

| capacity            | peak RSS after 2 / 16 / 30 steps | s a step (steps 10-29) |
| ------------------- | -------------------------------- | ---------------------- |
| 1,024 (the default) | 3.59 / 4.29 / 4.30 GiB           | 6.83                   |
| 256                 | 3.58 / 3.87 / 3.89 GiB           | 7.08                   |
| 128 (chosen)        | 3.51 / 3.80 / 3.83 GiB           | 7.21                   |
| 64                  | 3.48 / 3.78 / 3.79 GiB           | 7.29                   |
| 0                   | rebuilt at every layer: 4-5x slower                      |

128 (also what vLLM gives each of its own CPU GEMM handlers) keeps the primitives one
micro-batch reuses across its 30 layers and some from the micro-batches before: half a GiB
less for 6-9% of a step (bench/train_step.py, two runs), the price of rebuilding the
primitives of shapes seen again.

oneDNN reads the setting once, when it creates its first primitive, so it has to be in the
environment before the process multiplies anything in bf16 (the precision check does):
`python -m worker.trainer` sets it first thing. A value already in the environment is kept.
The vLLM server the trainer starts inherits it; its GEMM handlers keep their own caches.
"""
import os

SETTING = "ONEDNN_PRIMITIVE_CACHE_CAPACITY"
TRAINER_CAPACITY = 128

# The bound alone rebuilds the primitives of shapes that come back. Packed rows right-padded
# to a multiple of 32 tokens make the decoder's shapes repeat (a handful of widths instead of
# one per micro-batch). bench/train_step.py, 20 steps, peak RSS / s a step (steps 7-20):
# default cache unpadded 4.30 GiB / 7.01 s, padded 3.56 / 6.72; 128 unpadded 3.82 / 7.50,
# padded 3.50 / 7.24. With the padding the bound saves little and costs 7%: to be weighed.
CPU_BF16_ROW_MULTIPLE = 32


def bound_primitive_cache(environ=os.environ) -> None:
    environ.setdefault(SETTING, str(TRAINER_CAPACITY))


def row_width_multiple(training_on_gpu: bool, bf16: bool) -> int:
    """What packed rows are padded to a multiple of: only bf16 on a CPU goes through oneDNN's
    cache (fp32 uses MKL; GPUs have no such cache), elsewhere padding would only cost."""
    return CPU_BF16_ROW_MULTIPLE if bf16 and not training_on_gpu else 1
