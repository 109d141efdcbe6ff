"""Weight sync over NCCL through vLLM's weight transfer engine (GPU only).

The trainer (rank 0) and the server's workers form one NCCL group, however many GPUs the server
spans (1 + tensor parallel × data parallel, checked against GET /get_world_size first); each push
broadcasts every parameter, in the server's dtype, while every worker receives it in place and
loads its own shard. The server must be started with `--weight-transfer-config '{"backend":
"nccl"}'`. With several engines the push holds the server paused (mode keep): engines meeting in
lockstep would otherwise wait on one caught in the broadcast for ever.
Details: docs/deploying/gpus.md#weight-sync-on-gpus.
"""
import socket
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

from worker.trainer.distributed.sharding import full_tensor
from worker.trainer.training.precision import served_dtype
from worker.trainer.inference.server_api import WeightSyncError
from worker.trainer.weights.state_dict import unique_state_dict
from worker.trainer.inference.server_api import ServerPause, VllmAdminClient

if TYPE_CHECKING:
    from vllm.distributed.weight_transfer.base import WeightSource


class ModelWeights:
    """vLLM's WeightSource protocol over a live model: metadata first, then the tensors, same order.

    Floating-point tensors are cast to `dtype` one at a time, as they are sent."""

    def __init__(self, model, dtype):
        self.model, self.dtype = model, dtype

    def _named(self):
        for name, tensor in unique_state_dict(self.model).items():
            tensor = full_tensor(tensor)  # a sharded model's, gathered whole in turn (distributed/)
            yield name, tensor.to(self.dtype) if tensor.is_floating_point() else tensor

    def metadata(self):
        from vllm.distributed.weight_transfer.base import ParamMeta

        return [ParamMeta(name=name, dtype=self.dtype if t.is_floating_point() else t.dtype, shape=tuple(t.shape))
                for name, t in unique_state_dict(self.model).items()]

    def __iter__(self):
        return iter(self._named())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class NcclWeightSync:
    def __init__(self, server_url: str, server_world_size: int = 1, server_engines: int = 1,
                 pause: ServerPause | None = None, master_address: str = "127.0.0.1", master_port: int | None = None,
                 timeout_s: float = 300.0, dtype: str | None = None, engine_factory=None, api_key: str | None = None):
        """`server_world_size`: the server's GPU workers over all its engines (tensor parallel ×
        data parallel); `server_engines`: its data parallel engines, which the push pauses when
        there are several (`pause`: shared with the rest of the trainer, or one of its own).
        `dtype`: the server's (--dtype); by default what vLLM serves in on a GPU."""
        self.client = VllmAdminClient(server_url, timeout_s=timeout_s, api_key=api_key)
        self.server_world_size, self.server_engines = server_world_size, server_engines
        self.init_info: dict[str, Any] = {
            "master_address": master_address, "master_port": master_port or free_port(),
            "world_size": server_world_size + 1,  # the trainer is rank 0, the server's workers 1..
        }
        self.dtype = dtype or served_dtype("cuda")
        self._pause = pause
        self._engine_factory = engine_factory or self._vllm_engine
        self._engine: Any = None  # vLLM's trainer engine, made at the first push
        self._send_s: float | None = None

    def _vllm_engine(self, model):
        import torch
        from vllm.distributed.weight_transfer.nccl_engine import NCCLTrainerInitInfo, NCCLTrainerWeightTransferEngine

        info = NCCLTrainerInitInfo(rank=0, **self.init_info)
        # ModelWeights meets vLLM's WeightSource without subclassing it: vLLM is imported only here.
        source = cast("WeightSource", ModelWeights(model, getattr(torch, self.dtype)))
        return NCCLTrainerWeightTransferEngine.trainer_init(info, client=self.client, source=source)

    def push(self, model, version: int) -> float:
        started = time.perf_counter()
        if self._engine is None:
            self._check_server_world_size()
        with self._engines_held():
            if self._engine is None:
                self._engine = self._engine_factory(model)
            sending = time.perf_counter()
            self._engine.send_weights()
            self._send_s = time.perf_counter() - sending
            self.client.reset_prefix_cache()
        return time.perf_counter() - started

    def _check_server_world_size(self) -> None:
        """The group's size is the server's count of workers, or the rendezvous never completes."""
        reported = self.client.world_size()
        if reported is not None and reported != self.server_world_size:
            raise WeightSyncError(
                f"the vLLM server has {reported} GPU workers (GET /get_world_size) but the trainer expected "
                f"{self.server_world_size} (vllm_tensor_parallel_size × vllm_data_parallel_size): start the server "
                f"with the config's --tensor-parallel-size and --data-parallel-size")

    @contextmanager
    def _engines_held(self):
        """Several engines paused for the push (see the module's docstring); one is not."""
        if self.server_engines <= 1:
            yield
            return
        if self._pause is None:
            self._pause = ServerPause(self.client)
        with self._pause.paused("keep"):
            yield

    def last_push_note(self) -> str | None:
        return None  # one way only: broadcast from the trainer's GPU

    def last_push_parts(self) -> dict[str, float]:
        """The broadcast alone (the first push also sets the NCCL group up)."""
        return {} if self._send_s is None else {"send": self._send_s}

    def close(self) -> None:
        if self._engine is not None:
            self._engine.shutdown()
            self.client.shutdown_weight_transfer_engine()
        self.client.close()
