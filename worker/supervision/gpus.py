"""The run's GPUs on this worker: the vLLM server's, the served judges' and the trainer's, from the
run's config and the worker's settings (worker/gpu_split.py), worked out once when first asked:
before the server here starts, or as the trainer starts where vLLM has machines of its own. Too
few fails the run with the numbers."""
from functools import cached_property

from worker.gpu_split import GpuSplit, split_for_device
from worker.settings import WorkerSettings
from worker.trainer.config import TrainingConfig


class RunGpus:
    def __init__(self, config: TrainingConfig, settings: WorkerSettings):
        self.config, self.settings = config, settings

    @cached_property
    def split(self) -> GpuSplit:
        from worker.trainer.inference.launch import VLLMNotInstalledError, installed_device

        try:
            device = installed_device()
        except VLLMNotInstalledError:
            device = "cpu"  # the server's start says what is missing
        return split_for_device(self.config, device, self.settings.gpus, server_override=self.settings.vllm_gpus,
                                trainer_override=self.settings.trainer_gpus)
