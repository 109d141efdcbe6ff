"""NCCL weight sync to a server over several GPUs: one group that holds every worker of every
engine, checked against the server's count, and engines paused for the push where there are
several. vLLM's own trainer- and worker-side code runs, only the NCCL collectives are stubbed."""
import json
from types import SimpleNamespace

import httpx
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("vllm.distributed.weight_transfer.nccl_engine")

from worker.trainer.weight_sync.backends import make_weight_sync  # noqa: E402
from worker.trainer.inference.server_api import WeightSyncError  # noqa: E402
from worker.trainer.weight_sync.filesystem import FilesystemWeightSync  # noqa: E402
from worker.trainer.weight_sync.nccl import NcclWeightSync  # noqa: E402
from worker.trainer.inference.server_api import ServerPause, VllmAdminClient  # noqa: E402


class StubServer:
    """Records the calls; answers GET /get_world_size as a server of `world_size` workers would."""

    def __init__(self, world_size: int | None = None):
        self.calls = []
        self.world_size = world_size

    def __call__(self, request: httpx.Request):
        self.calls.append((request.method, request.url.path, dict(request.url.params),
                           json.loads(request.content) if request.content else None))
        if request.url.path == "/get_world_size":
            if self.world_size is None:
                return httpx.Response(404, json={"detail": "Not Found"})
            return httpx.Response(200, json={"world_size": self.world_size})
        return httpx.Response(200, json={})

    def client(self):
        return VllmAdminClient("http://vllm", transport=httpx.MockTransport(self))

    @property
    def paths(self):
        return [path for _, path, _, _ in self.calls]


@pytest.fixture
def no_collectives(monkeypatch):
    """vLLM's trainer-side engine as it is, without a GPU: no NCCL group, no broadcast."""
    from vllm.distributed.weight_transfer import nccl_engine

    monkeypatch.setattr(nccl_engine, "open_trainer_endpoint", lambda info: SimpleNamespace(destroy=lambda: None))
    monkeypatch.setattr(nccl_engine.NCCLTrainerWeightTransferEngine, "_broadcast",
                        lambda self, source, meta: [None for _ in source])


def nccl_sync(stub, tp=1, dp=1, pause=None):
    sync = NcclWeightSync("http://vllm", server_world_size=tp * dp, server_engines=dp, master_port=29555,
                          pause=pause)
    sync.client = stub.client()
    return sync


def vllm_worker_ranks(init_info: dict, tp: int, dp: int, monkeypatch) -> dict[tuple[int, int], tuple[int, int]]:
    """(rank, world size) that each of vLLM's workers joins the group with, given `init_info`: its
    own worker_init_process_group, on every (data parallel index, tensor parallel rank)."""
    from vllm.distributed.weight_transfer import nccl_common
    from vllm.distributed.weight_transfer.nccl_engine import NCCLWeightTransferInitInfo

    joined = {}
    monkeypatch.setattr(nccl_common, "stateless_init_process_group",
                        lambda address, port, rank, world_size, device: (rank, world_size))
    monkeypatch.setattr(torch.accelerator, "current_device_index", lambda: 0)
    info = NCCLWeightTransferInitInfo(**init_info)
    for dp_index in range(dp):
        for tp_rank in range(tp):
            parallel = SimpleNamespace(data_parallel_index=dp_index, world_size=tp, rank=tp_rank)
            joined[dp_index, tp_rank] = nccl_common.worker_init_process_group(info, parallel)
    return joined


@pytest.mark.parametrize(("tp", "dp"), [(1, 1), (2, 1), (1, 2), (2, 2), (4, 2)])
def test_every_worker_of_every_engine_joins_the_one_group_at_its_own_rank(tp, dp, no_collectives, monkeypatch):
    stub = StubServer(world_size=tp * dp)
    sync = nccl_sync(stub, tp, dp, pause=ServerPause(stub.client()))
    sync.push(torch.nn.Linear(2, 2), version=1)
    (init,) = [body["init_info"] for _, path, _, body in stub.calls if path == "/init_weight_transfer_engine"]
    assert init["world_size"] == tp * dp + 1 and init["rank_offset"] == 1  # the trainer is rank 0
    joined = vllm_worker_ranks(init, tp, dp, monkeypatch)
    assert sorted(rank for rank, _ in joined.values()) == list(range(1, tp * dp + 1))
    assert {size for _, size in joined.values()} == {tp * dp + 1}


def test_a_server_of_another_size_is_refused_before_the_rendezvous(no_collectives):
    stub = StubServer(world_size=4)
    sync = nccl_sync(stub, tp=2)
    with pytest.raises(WeightSyncError, match=r"the vLLM server has 4 GPU workers \(GET /get_world_size\) but the "
                                              r"trainer expected 2 \(vllm_tensor_parallel_size × vllm_data_par"):
        sync.push(torch.nn.Linear(2, 2), version=1)
    assert "/init_weight_transfer_engine" not in stub.paths


def test_a_server_that_does_not_say_its_size_is_taken_at_the_configs_word(no_collectives):
    stub = StubServer(world_size=None)
    sync = nccl_sync(stub, tp=2)
    sync.push(torch.nn.Linear(2, 2), version=1)
    assert stub.paths[:2] == ["/get_world_size", "/init_weight_transfer_engine"]


def test_several_engines_are_paused_for_every_push_and_asked_their_size_once(no_collectives):
    stub = StubServer(world_size=4)
    sync = nccl_sync(stub, tp=2, dp=2, pause=ServerPause(stub.client()))
    sync.push(torch.nn.Linear(2, 2), version=1)
    sync.push(torch.nn.Linear(2, 2), version=2)
    push = ["/pause", "/start_weight_update", "/update_weights", "/finish_weight_update", "/reset_prefix_cache",
            "/resume"]
    assert stub.paths == ["/get_world_size", "/pause", "/init_weight_transfer_engine", *push[1:], *push]
    assert {params["mode"] for _, path, params, _ in stub.calls if path == "/pause"} == {"keep"}


def test_inside_a_held_pause_the_push_neither_pauses_nor_resumes(no_collectives):
    stub = StubServer(world_size=2)
    pause = ServerPause(stub.client())
    sync = nccl_sync(stub, dp=2, pause=pause)
    with pause.paused("keep"):
        sync.push(torch.nn.Linear(2, 2), version=1)
    assert stub.paths.count("/pause") == 1 and stub.paths.count("/resume") == 1


def test_one_engine_over_several_gpus_is_not_paused(no_collectives):
    stub = StubServer(world_size=2)
    sync = nccl_sync(stub, tp=2, pause=ServerPause(stub.client()))
    sync.push(torch.nn.Linear(2, 2), version=1)
    assert "/pause" not in stub.paths and "/resume" not in stub.paths


def test_the_sizes_reach_the_nccl_sync_alone(tmp_path):
    pause = ServerPause(StubServer().client())
    sync = make_weight_sync("nccl", "http://vllm", tmp_path, pause=pause, server_world_size=4, server_engines=2)
    assert (sync.server_world_size, sync.server_engines, sync.init_info["world_size"]) == (4, 2, 5)
    assert sync._pause is pause
    written = make_weight_sync("filesystem", "http://vllm", tmp_path, server_world_size=4, server_engines=2)
    assert isinstance(written, FilesystemWeightSync)
