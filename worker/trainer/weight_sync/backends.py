"""The weight sync a run's config names (weight_sync_backend), built for its server."""
from worker.trainer.weight_sync.filesystem import FilesystemWeightSync
from worker.trainer.weight_sync.http_push import HttpWeightPush
from worker.trainer.weight_sync.interface import WeightSync
from worker.trainer.weight_sync.lora_adapter import LoraAdapterSync
from worker.trainer.weight_sync.nccl import NcclWeightSync


def make_weight_sync(backend: str, server_url: str, workdir, pause=None, server_world_size: int = 1,
                     server_engines: int = 1, remote_urls: list[str] | None = None, **options) -> WeightSync:
    """`pause` (a server_api.ServerPause): shared with the step's time slicing, for the filesystem sync.

    `server_world_size` (the server's GPU workers: tensor parallel × data parallel) and
    `server_engines` (data parallel) size the NCCL group; the other backends reach every worker
    through the server's own calls, which go to all of them. `options` may carry the server's
    `api_key`, for the backends' own clients of it. `remote_urls`: servers on machines of their own
    (inference_machines), given the file over HTTP."""
    if backend == "filesystem" and remote_urls:
        return HttpWeightPush(remote_urls, workdir, pause=pause, **options)
    if backend == "filesystem":
        return FilesystemWeightSync(server_url, workdir, pause=pause, **options)
    if backend == "lora_adapter":
        return LoraAdapterSync(server_url, workdir, pause=pause, **options)
    if backend == "nccl":
        return NcclWeightSync(server_url, server_world_size=server_world_size, server_engines=server_engines,
                              pause=pause, **options)
    raise ValueError(f"weight_sync_backend must be filesystem, nccl or lora_adapter, not {backend!r}")
