"""Taking turns with the vLLM server for the machine's CPU cores (cpu_sharing take_turns).

vLLM is paused (`/pause?mode=keep`, which freezes requests in flight) while a step trains and
resumed after, so neither competes for the cores (inference/cpu_sharing.py says why that
matters; `python -m bench.trainer` measures it). The weight sync at the end of the step shares
the same hold (inference/server_api.ServerPause), so the server resumes once.
"""
from contextlib import contextmanager

from worker.trainer.inference.server_api import ServerPause


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
