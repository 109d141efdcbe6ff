"""Pushing the trainer's weights into the running vLLM server, behind one interface.

`filesystem` works everywhere (CPU included): safetensors to shared memory, then
the server reloads them. `nccl` broadcasts GPU tensors through vLLM's weight
transfer engine. `lora_adapter` sends a LoRA run's adapter alone. Each returns the
seconds the push took.
"""
from typing import Protocol


class WeightSync(Protocol):
    def push(self, model, version: int) -> float:
        """Makes the server generate with `model`'s current weights, tagged `version`."""

    def last_push_note(self) -> str | None:
        """How the latest push reached the server, for the run's log (None: nothing to say)."""

    def last_push_parts(self) -> dict[str, float]:
        """Seconds of the latest push's parts by name, reported beside its total: what a slow
        sync is located by ({}: not split)."""

    def close(self) -> None:
        ...


class WeightSyncError(RuntimeError):
    """The server did not take the new weights. It may be unusable: treat as fatal for it."""


def make_weight_sync(backend: str, server_url: str, workdir, pause=None, server_world_size: int = 1,
                     server_engines: int = 1, **options) -> WeightSync:
    """`pause` (a server_api.ServerPause): shared with the step's time slicing, for the filesystem sync.

    `server_world_size` (the server's GPU workers: tensor parallel × data parallel) and
    `server_engines` (data parallel) size the NCCL group; the other backends reach every worker
    through the server's own calls, which go to all of them. `options` may carry the server's
    `api_key`, for the backends' own clients of it."""
    if backend == "filesystem":
        from worker.trainer.weight_sync.filesystem import FilesystemWeightSync

        return FilesystemWeightSync(server_url, workdir, pause=pause, **options)
    if backend == "lora_adapter":
        from worker.trainer.weight_sync.lora_adapter import LoraAdapterSync

        return LoraAdapterSync(server_url, workdir, pause=pause, **options)
    if backend == "nccl":
        from worker.trainer.weight_sync.nccl import NcclWeightSync

        return NcclWeightSync(server_url, server_world_size=server_world_size, server_engines=server_engines,
                              pause=pause, **options)
    raise ValueError(f"weight_sync_backend must be filesystem, nccl or lora_adapter, not {backend!r}")
