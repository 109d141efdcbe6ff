"""Taking turns with the vLLM server for the machine's CPU cores (cpu_sharing take_turns).

Overlapped on the same cores, the trainer and vLLM both crawl (inference/cpu_sharing.py).
Measured on the 2-core machine (bench/trainer.py, SmolLM2-135M, 16 completions a step):
side by side a step took 30-35 s and vLLM generated 50-60 tokens/s; pausing vLLM while the
step trains brought the step to ~22 s. Splitting the cores, the default on 2 cores or
more, does better still; taking turns remains for a single core.

vLLM's `/pause?mode=keep` freezes requests in flight and `/resume` continues them, so the
rollout worker notices nothing but a slower answer. The weight sync at the end of the step
shares the same hold (weight_sync/server_api.ServerPause), so the server resumes once.
"""
from contextlib import contextmanager

from worker.trainer.weight_sync.server_api import ServerPause


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
