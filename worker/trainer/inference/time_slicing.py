"""Taking turns with the vLLM server for the machine's CPU cores.

On a GPU node generation and training run on different devices, and the point of the async
design is that they overlap. On a CPU they share the same few cores, and overlapping them
is slower than taking turns: both are many-threaded (OpenMP), and a thread that waits at a
barrier for a sibling descheduled by the other process waits for nothing. Measured on the
2-core machine (bench/trainer.py, SmolLM2-135M, 16 completions a step): side by side a step
took 30-35 s and vLLM generated 50-60 tokens/s; pausing vLLM while the step trains brought
the step to ~22 s.

vLLM's `/pause?mode=keep` freezes requests in flight and `/resume` continues them, so the
rollout worker notices nothing but a slower answer. The weight sync at the end of the step
shares the same hold (weight_sync/server_api.ServerPause), so the server resumes once.
"""
from contextlib import contextmanager

from worker.trainer.config import switched_on
from worker.trainer.weight_sync.server_api import ServerPause


def pauses_generation(setting: str, training_on_gpu: bool) -> bool:
    """auto: on when training on a CPU (on GPUs generation and training overlap on separate devices)."""
    return switched_on(setting, auto=not training_on_gpu)


class GenerationPause:
    """`with pause.while_training():` stops the server's generation for the block."""

    def __init__(self, pause: ServerPause | None):
        self.pause = pause  # None: never pauses

    @property
    def pausing(self) -> bool:
        return self.pause is not None

    @contextmanager
    def while_training(self):
        if self.pause is None:
            yield
            return
        with self.pause.paused("keep"):
            yield
