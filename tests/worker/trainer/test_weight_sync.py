"""Weight sync against a stub vLLM server: the right calls, in order, with the right payloads."""
import json

import httpx
import pytest

torch = pytest.importorskip("torch")

from worker.trainer.weight_sync.backends import make_weight_sync  # noqa: E402
from worker.trainer.inference.server_api import WeightSyncError  # noqa: E402
from worker.trainer.weight_sync.filesystem import FilesystemWeightSync  # noqa: E402
from worker.trainer.weights.state_dict import unique_state_dict  # noqa: E402
from worker.trainer.weight_sync.nccl import NcclWeightSync  # noqa: E402
from worker.trainer.inference.server_api import ServerPause, VllmAdminClient  # noqa: E402


@pytest.fixture(autouse=True)
def files_under_tmp_path(monkeypatch):
    """Syncs write under the test's tmp_path, not /dev/shm, which outlives the test."""
    from worker.trainer.weight_sync import filesystem, lora_adapter

    monkeypatch.setattr(filesystem, "shared_memory_dir", lambda fallback: fallback)
    monkeypatch.setattr(lora_adapter, "shared_memory_dir", lambda fallback: fallback)


class TiedModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(4, 3)
        self.head = torch.nn.Linear(3, 4, bias=False)
        self.head.weight = self.embed.weight  # tied, as in SmolLM2


class StubServer:
    def __init__(self, fail_on=None, reload_answer=None):
        self.calls = []
        self.fail_on = fail_on
        self.reload_answer = reload_answer  # what our worker extension's reload returns

    def __call__(self, request: httpx.Request):
        body = json.loads(request.content) if request.content else None
        self.calls.append((request.url.path, dict(request.url.params), body))
        if request.url.path == self.fail_on:
            return httpx.Response(500, json={"error": "EngineDeadError"})
        if request.url.path == "/collective_rpc" and self.reload_answer is not None:
            return httpx.Response(200, json={"results": [self.reload_answer]})
        return httpx.Response(200, json={})

    def client(self):
        return VllmAdminClient("http://vllm", transport=httpx.MockTransport(self))


def filesystem_sync(stub, tmp_path, dtype="bfloat16", pause=None):
    return FilesystemWeightSync("http://vllm", tmp_path, dtype=dtype, pause=pause or ServerPause(stub.client()))


def test_tied_weights_are_written_once():
    assert list(unique_state_dict(TiedModel())) == ["embed.weight"]


def test_filesystem_push_pauses_reloads_resets_and_resumes(tmp_path):
    stub = StubServer()
    sync = filesystem_sync(stub, tmp_path)
    seconds = sync.push(TiedModel(), version=1)
    paths = [call[0] for call in stub.calls]
    assert paths == ["/pause", "/collective_rpc", "/reset_prefix_cache", "/resume"]
    assert stub.calls[0][1] == {"mode": "keep"}
    rpc = stub.calls[1][2]
    assert rpc["method"] == "reload_weights_in_place"
    assert seconds > 0
    sync.close()


def test_filesystem_push_lets_the_server_reload_directly_unless_told_not_to(tmp_path):
    stub = StubServer()
    filesystem_sync(stub, tmp_path).push(TiedModel(), version=1)
    assert stub.calls[1][2]["kwargs"]["allow_direct"] is True
    stub = StubServer()
    FilesystemWeightSync("http://vllm", tmp_path, dtype="bfloat16", pause=ServerPause(stub.client()),
                         direct_reload=False).push(TiedModel(), version=1)
    assert stub.calls[1][2]["kwargs"]["allow_direct"] is False


def test_the_push_note_says_which_way_the_server_reloaded(tmp_path):
    direct = StubServer(reload_answer={"reload": "direct", "why_not_direct": None, "seconds": 0.19})
    sync = filesystem_sync(direct, tmp_path)
    assert sync.last_push_note() is None  # nothing pushed yet
    sync.push(TiedModel(), version=1)
    assert sync.last_push_note() == "vLLM took the new weights by the direct reload in 0.19 s"

    refused = StubServer(reload_answer={"reload": "vllm", "why_not_direct": "the server has LoRA adapters",
                                        "seconds": 0.3})
    sync = filesystem_sync(refused, tmp_path)
    sync.push(TiedModel(), version=1)
    assert "vLLM's reload (not the direct one: the server has LoRA adapters)" in sync.last_push_note()


def test_a_server_without_an_answer_leaves_no_push_note(tmp_path):
    sync = filesystem_sync(StubServer(), tmp_path)  # answers {} as an older extension would
    sync.push(TiedModel(), version=1)
    assert sync.last_push_note() is None


def test_the_push_parts_are_the_write_and_the_servers_own_reload_time(tmp_path):
    sync = filesystem_sync(StubServer(reload_answer={"reload": "direct", "why_not_direct": None, "seconds": 0.19}),
                           tmp_path)
    assert sync.last_push_parts() == {}  # nothing pushed yet
    total = sync.push(TiedModel(), version=1)
    parts = sync.last_push_parts()
    assert set(parts) == {"write", "server_reload"} and parts["server_reload"] == 0.19
    assert 0 < parts["write"] < total


def test_a_server_that_does_not_time_its_reload_leaves_only_the_write(tmp_path):
    sync = filesystem_sync(StubServer(), tmp_path)  # answers {} as an older extension would
    sync.push(TiedModel(), version=1)
    assert set(sync.last_push_parts()) == {"write"}


def test_filesystem_push_writes_the_weights_in_the_servers_dtype(tmp_path):
    from safetensors.torch import load_file

    stub = StubServer()
    sync = filesystem_sync(stub, tmp_path)
    model = TiedModel()
    sync.push(model, version=3)
    folder = stub.calls[1][2]["kwargs"]["weights_path"]
    written = load_file(f"{folder}/model.safetensors")["embed.weight"]
    assert written.dtype == torch.bfloat16  # what vLLM serves (--dtype bfloat16)
    assert torch.equal(written, model.embed.weight.detach().to(torch.bfloat16))
    assert model.embed.weight.dtype == torch.float32  # the trainer's master weights are left alone
    sync.close()


def test_a_float32_server_gets_the_master_weights_unrounded(tmp_path):
    from safetensors.torch import load_file

    stub = StubServer()
    sync = filesystem_sync(stub, tmp_path, dtype="float32")
    model = TiedModel()
    sync.push(model, version=1)
    written = load_file(f"{stub.calls[1][2]['kwargs']['weights_path']}/model.safetensors")["embed.weight"]
    assert written.dtype == torch.float32 and torch.equal(written, model.embed.weight.detach())
    sync.close()


def test_by_default_files_are_written_in_what_a_local_server_serves(tmp_path, monkeypatch):
    import worker.trainer.training.precision as precision

    monkeypatch.setattr(precision, "bf16_is_fast", lambda: False)
    expected = "bfloat16" if torch.cuda.is_available() else "float32"
    assert FilesystemWeightSync("http://vllm", tmp_path).dtype == expected


def test_inside_a_held_pause_the_sync_neither_pauses_nor_resumes(tmp_path):
    # The step's time slicing already holds the server paused; it resumes once, after the sync.
    stub = StubServer()
    pause = ServerPause(stub.client())
    sync = filesystem_sync(stub, tmp_path, pause=pause)
    with pause.paused("keep"):
        sync.push(TiedModel(), version=1)
    paths = [path for path, _, _ in stub.calls]
    assert paths == ["/pause", "/collective_rpc", "/reset_prefix_cache", "/resume"]
    sync.close()


def test_every_push_rewrites_the_same_file_and_close_removes_it(tmp_path):
    stub = StubServer()
    sync = filesystem_sync(stub, tmp_path)
    sync.push(TiedModel(), version=1)
    sync.push(TiedModel(), version=2)
    reloaded = [call[2]["kwargs"]["weights_path"] for call in stub.calls if call[0] == "/collective_rpc"]
    assert reloaded == [str(sync.folder)] * 2
    assert [p.name for p in sync.folder.iterdir()] == ["model.safetensors"]
    sync.close()
    assert not sync.folder.exists()


def test_failed_reload_is_an_error_and_the_server_is_still_resumed(tmp_path):
    stub = StubServer(fail_on="/collective_rpc")
    sync = filesystem_sync(stub, tmp_path)
    with pytest.raises(WeightSyncError, match="HTTP 500.*EngineDeadError"):
        sync.push(TiedModel(), version=1)
    assert stub.calls[-1][0] == "/resume"


def test_unreachable_server_is_a_weight_sync_error():
    def refuse(request):
        raise httpx.ConnectError("refused")

    client = VllmAdminClient("http://vllm", transport=httpx.MockTransport(refuse))
    with pytest.raises(WeightSyncError, match="unreachable during /pause"):
        client.pause("keep")


def test_nccl_drives_vllms_weight_transfer_endpoints_in_order(monkeypatch):
    """vLLM's own trainer-side engine, with only the NCCL collectives stubbed out (no GPU here)."""
    from vllm.distributed.weight_transfer import nccl_engine

    class FakeGroup:
        def destroy(self):
            pass

    monkeypatch.setattr(nccl_engine, "open_trainer_endpoint", lambda info: FakeGroup())
    sent = []
    monkeypatch.setattr(nccl_engine.NCCLTrainerWeightTransferEngine, "_broadcast",
                        lambda self, source, meta: sent.extend(tensor.dtype for _, tensor in source))
    stub = StubServer()
    sync = NcclWeightSync("http://vllm", server_world_size=2, master_port=29555)
    sync.client = stub.client()
    assert sync.last_push_parts() == {}
    sync.push(TiedModel(), version=1)
    sync.push(TiedModel(), version=2)
    assert set(sync.last_push_parts()) == {"send"}
    sync.close()
    paths = [call[0] for call in stub.calls]
    assert paths == [
        "/get_world_size", "/init_weight_transfer_engine",  # the group's size checked first
        "/start_weight_update", "/update_weights", "/finish_weight_update", "/reset_prefix_cache",
        "/start_weight_update", "/update_weights", "/finish_weight_update", "/reset_prefix_cache",
        "/shutdown_weight_transfer_engine",
    ]
    init = stub.calls[1][2]["init_info"]
    assert init["master_port"] == 29555 and init["world_size"] == 3 and init["rank_offset"] == 1
    update = stub.calls[3][2]["update_info"]
    assert update["names"] == ["embed.weight"] and update["shapes"] == [[4, 3]]
    # the fp32 weights travel as what a GPU server serves
    assert update["dtype_names"] == ["bfloat16"] and sent == [torch.bfloat16, torch.bfloat16]


class UploadingServers:
    """Stands for vLLM servers on machines of their own: each takes the file and reloads its copy."""

    def __init__(self, timings: dict[str, float]):
        self.calls, self.bodies, self.timings = [], {}, timings

    def __call__(self, request: httpx.Request):
        host = request.url.host
        self.calls.append((host, request.method, request.url.path))
        if request.url.path == "/grpo/weights":
            self.bodies[host] = request.read()
            return httpx.Response(200, json={"folder": f"/dev/shm/{host}-weights"})
        if request.url.path == "/collective_rpc":
            folder = json.loads(request.content)["kwargs"]["weights_path"]
            return httpx.Response(200, json={"results": [{"reload": "direct", "why_not_direct": None,
                                                          "seconds": self.timings[host], "folder": folder}]})
        return httpx.Response(200, json={})


def test_weights_over_http_reach_every_server_which_reloads_its_own_copy(tmp_path):
    from worker.trainer.weight_sync.http_push import HttpWeightPush

    servers = UploadingServers({"vllm-1": 0.25, "vllm-2": 0.5})
    transport = httpx.MockTransport(servers)
    first = ServerPause(VllmAdminClient("http://vllm-1", transport=transport))
    sync = HttpWeightPush(["http://vllm-1", "http://vllm-2"], tmp_path, dtype="float32", pause=first,
                          transport=transport)
    sync.push(TiedModel(), version=1)
    written = (sync.folder / "model.safetensors").read_bytes()
    assert servers.bodies == {"vllm-1": written, "vllm-2": written}
    for host in ("vllm-1", "vllm-2"):
        # the upload while it still generates, then the reload of its copy inside the pause
        assert [(method, path) for who, method, path in servers.calls if who == host] == [
            ("PUT", "/grpo/weights"), ("POST", "/pause"), ("POST", "/collective_rpc"),
            ("POST", "/reset_prefix_cache"), ("POST", "/resume")]
    assert sync.last_reload["folder"] == "/dev/shm/vllm-2-weights"  # the slowest reload stands for all
    assert set(sync.last_push_parts()) == {"write", "upload", "server_reload"}
    assert sync.last_push_parts()["server_reload"] == 0.5
    assert sync.last_push_note().endswith("sent over HTTP to 2 server(s): http://vllm-1, http://vllm-2")
    sync.close()


def test_a_server_that_refuses_the_upload_fails_the_push_before_any_pause(tmp_path):
    from worker.trainer.weight_sync.http_push import HttpWeightPush

    calls = []

    def full(request):
        calls.append(request.url.path)
        return httpx.Response(507, json={"error": "the weights (9 bytes) do not fit"})

    transport = httpx.MockTransport(full)
    sync = HttpWeightPush(["http://vllm-1"], tmp_path, pause=ServerPause(VllmAdminClient("http://vllm-1",
                                                                                         transport=transport)))
    with pytest.raises(WeightSyncError, match="refused /grpo/weights with HTTP 507.*do not fit"):
        sync.push(TiedModel(), version=1)
    assert calls == ["/grpo/weights"]
    sync.close()


def test_backend_is_chosen_by_name(tmp_path):
    from worker.trainer.weight_sync.http_push import HttpWeightPush

    assert isinstance(make_weight_sync("filesystem", "http://vllm", tmp_path, remote_urls=["http://a"]),
                      HttpWeightPush)
    assert isinstance(make_weight_sync("filesystem", "http://vllm", tmp_path), FilesystemWeightSync)
    assert isinstance(make_weight_sync("nccl", "http://vllm", tmp_path), NcclWeightSync)
    with pytest.raises(ValueError, match="weight_sync_backend"):
        make_weight_sync("carrier-pigeon", "http://vllm", tmp_path)


def test_a_later_push_writes_the_updated_weights(tmp_path):
    from safetensors.torch import load_file

    stub = StubServer()
    sync = filesystem_sync(stub, tmp_path)
    model = TiedModel()
    sync.push(model, version=1)
    with torch.no_grad():
        model.embed.weight.add_(1.0)
    sync.push(model, version=2)
    folder = stub.calls[-3][2]["kwargs"]["weights_path"]
    written = load_file(f"{folder}/model.safetensors")["embed.weight"]
    assert torch.equal(written, model.embed.weight.detach().to(torch.bfloat16))
    sync.close()


class WrittenAdapter:
    """What LoraAdapterSync asks of a lora.ServedLora: writing the adapter's files."""

    def save_adapter(self, folder, dtype=None):
        folder.mkdir(parents=True)
        (folder / "adapter_model.safetensors").write_text(str(dtype))


def lora_sync(stub, tmp_path):
    from worker.trainer.weight_sync.lora_adapter import LoraAdapterSync

    return LoraAdapterSync("http://vllm", tmp_path, pause=ServerPause(stub.client()), dtype="bfloat16")


def test_a_lora_push_loads_the_adapter_while_paused_and_asks_once_that_it_stays_in_memory(tmp_path):
    stub = StubServer(reload_answer={"kept": True, "why_not": None})
    sync = lora_sync(stub, tmp_path)
    sync.push(WrittenAdapter(), version=1)
    sync.push(WrittenAdapter(), version=2)
    assert [path for path, _, _ in stub.calls] == ["/pause", "/v1/load_lora_adapter", "/collective_rpc", "/resume",
                                                   "/pause", "/v1/load_lora_adapter", "/resume"]
    assert stub.calls[0][1] == {"mode": "keep"} and stub.calls[2][2]["method"] == "keep_lora_adapters_loaded"
    loads = [body for path, _, body in stub.calls if path == "/v1/load_lora_adapter"]
    assert all(body["lora_name"] == "policy-lora" and body["load_inplace"] for body in loads)
    assert loads[0]["lora_path"] != loads[1]["lora_path"]  # a new path a version: the prefix cache keys on it
    assert "kept in memory between loads" in sync.last_push_note()
    assert set(sync.last_push_parts()) == {"write", "server_load"}


def test_a_lora_push_writes_the_servers_dtype_and_keeps_the_newest_two_versions(tmp_path):
    stub = StubServer(reload_answer={"kept": True, "why_not": None})
    sync = lora_sync(stub, tmp_path)
    for version in (1, 2, 3):
        sync.push(WrittenAdapter(), version)
    folders = sorted(path.name for path in sync.folder.iterdir())
    assert [name.split("-")[0] for name in folders] == ["v0000002", "v0000003"]
    assert (sync.folder / folders[-1] / "adapter_model.safetensors").read_text() == "torch.bfloat16"
    sync.close()
    assert not sync.folder.exists()  # the server holds the adapter in memory


def test_a_server_without_our_extension_keeps_reading_the_newest_adapter_after_close(tmp_path):
    stub = StubServer(fail_on="/collective_rpc")
    sync = lora_sync(stub, tmp_path)
    sync.push(WrittenAdapter(), version=1)
    assert "read from its files at every engine step (vLLM refused /collective_rpc with HTTP 500" in \
        sync.last_push_note()
    sync.close()
    assert [path.name.split("-")[0] for path in sync.folder.iterdir()] == ["v0000001"]
