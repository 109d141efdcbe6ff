"""Weight sync into a real vLLM server: what it serves afterwards is the trainer's model, tied head included,
whether it reads the trainer's file or is sent it over HTTP (a server on a machine of its own).

One server for the module (about 30 s to start on the tiny model). The tiny model ties its
output head to its embeddings, as SmolLM2 does: vLLM's own reload left such a head with its
old weights. On a CPU the server reloads by the direct path (inference/direct_reload.py);
one test checks it serves what vLLM's own reload serves.
"""
import shutil

import httpx
import pytest

from worker.trainer.config import TrainingConfig
from worker.trainer.inference.weight_upload import FILE_NAME, ROUTE

TEXT = "The capital of France is Paris, and the capital of Italy is Rome."
# Served in float32 whatever this machine prefers: bf16 would round the log-probs of this
# random model (around -25) by up to 0.1, hiding a small error in the sync.
TOLERANCE = 1e-3
KEY = "a-run-key-" + "x" * 33


def trainer_logprobs(model, ids: list[int]):
    import torch

    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0, :-1].float()
    return torch.log_softmax(logits, -1).gather(1, torch.tensor(ids[1:])[:, None])[:, 0]


def served_logprobs(server, ids: list[int], model_name: str | None = None):
    import torch

    response = httpx.post(f"{server.url}/v1/completions", timeout=60, headers=server.headers, json={
        "model": model_name or server.served_model_name, "prompt": ids, "max_tokens": 1, "prompt_logprobs": 0,
        "temperature": 1.0})
    response.raise_for_status()
    entries = response.json()["choices"][0]["prompt_logprobs"][1:]
    return torch.tensor([entry[str(token)]["logprob"] for token, entry in zip(ids[1:], entries)])


def perturbed(model, seed: int):
    """Every weight moved: the linear layers' packed GEMMs must be rebuilt, the tied head too."""
    import torch

    with torch.no_grad():
        generator = torch.Generator().manual_seed(seed)
        for parameter in model.parameters():
            parameter.add_(torch.randn(parameter.shape, generator=generator) * 0.02)
        model.model.embed_tokens.weight.normal_(0.0, 0.2, generator=generator)
    return model


@pytest.fixture(scope="module")
def upload_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("server-side") / "weights"


@pytest.fixture(scope="module")
def server(tiny_model_dir, tmp_path_factory, upload_folder):
    """Started as a run's server on a machine of vLLM's own is: a key, and weights taken over HTTP."""
    from worker.trainer.inference.server import VLLMServer

    config = TrainingConfig(max_prompt_length=64, max_completion_length=16, vllm_kv_cache_gib=1)
    log_path = tmp_path_factory.mktemp("vllm") / "vllm.log"
    with VLLMServer.for_config(str(tiny_model_dir), config, log_path=log_path, dtype="float32", api_key=KEY,
                               upload_folder=str(upload_folder)) as server:
        yield server


@pytest.fixture
def model(tiny_model_dir):
    import torch
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32)


@pytest.fixture
def ids(tiny_model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model_dir)(TEXT, add_special_tokens=False).input_ids


@pytest.fixture
def sync(server, tmp_path):
    from worker.trainer.weight_sync.filesystem import FilesystemWeightSync

    sync = FilesystemWeightSync(server.url, tmp_path, dtype="float32", api_key=server.api_key)
    yield sync
    sync.close()


def test_after_a_sync_the_server_computes_the_trainers_log_probs(server, sync, model, ids):
    import torch

    for version in (1, 2):  # the second sync rewrites the file the first one wrote
        perturbed(model, seed=version)
        sync.push(model, version=version)
        served = served_logprobs(server, ids)
        assert (served - trainer_logprobs(model, ids)).abs().max() < TOLERANCE, f"after sync {version}"
    assert sync.last_reload["reload"] == "direct", sync.last_reload  # a CPU server, an unquantized model

    old_head = model.lm_head.weight.detach().clone()
    perturbed(model, seed=3)
    with torch.no_grad():
        model.lm_head.weight = torch.nn.Parameter(old_head)  # the new body through the old head
    assert (served - trainer_logprobs(model, ids)).abs().max() > 10 * TOLERANCE


def test_the_direct_reload_serves_what_vllms_own_reload_serves(server, sync, model, ids):
    sync.push(perturbed(model, seed=4), version=1)
    direct = served_logprobs(server, ids)
    answer = sync.client.reload_weights(str(sync.folder), allow_direct=False)  # the same file, vLLM's way
    assert answer["reload"] == "vllm"
    assert (served_logprobs(server, ids) - direct).abs().max() < 1e-5


def test_weights_missing_from_the_file_fail_the_reload_by_name(server, sync, model, ids, tmp_path):
    from safetensors.torch import save_file

    from worker.trainer.inference.server_api import WeightSyncError
    from worker.trainer.weights.state_dict import unique_state_dict

    tensors = unique_state_dict(model)
    del tensors["model.layers.0.mlp.down_proj.weight"]
    folder = tmp_path / "partial"
    folder.mkdir()
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(WeightSyncError, match="no weights for 1 parameters.*down_proj"):
        sync.client.reload_weights(str(folder))
    # The linear layers keep their packed weights and the engine lives on (the run that
    # asked still fails: the norms and embeddings may already hold the new values).
    assert served_logprobs(server, ids).isfinite().all()


def test_weights_sent_over_http_are_served_from_the_servers_own_copy(server, model, ids, tmp_path, upload_folder):
    from worker.trainer.weight_sync.http_push import HttpWeightPush

    sync = HttpWeightPush([server.url], tmp_path, dtype="float32", api_key=KEY)
    try:
        for version in (1, 2):
            perturbed(model, seed=version)
            sync.push(model, version=version)
            served = served_logprobs(server, ids)
            assert (served - trainer_logprobs(model, ids)).abs().max() < TOLERANCE, f"after push {version}"
        assert (upload_folder / FILE_NAME).read_bytes() == (sync.folder / FILE_NAME).read_bytes()
        assert sync.folder != upload_folder
        parts = sync.last_push_parts()
        assert set(parts) == {"write", "upload", "server_reload"}, parts
        assert f"sent over HTTP to 1 server(s): {server.url}" in sync.last_push_note()
    finally:
        sync.close()


def test_the_upload_route_asks_the_runs_key_before_anything_is_written(server, upload_folder):
    before = (upload_folder / FILE_NAME).stat().st_mtime_ns if (upload_folder / FILE_NAME).exists() else None
    response = httpx.put(f"{server.url}{ROUTE}", content=b"not weights", timeout=30)
    assert response.status_code == 401
    wrong = httpx.put(f"{server.url}{ROUTE}", content=b"not weights", headers={"Authorization": "Bearer no"},
                      timeout=30)
    assert wrong.status_code == 401
    after = (upload_folder / FILE_NAME).stat().st_mtime_ns if (upload_folder / FILE_NAME).exists() else None
    assert after == before
    assert httpx.get(f"{server.url}/health", timeout=30).status_code == 200


def test_an_untied_output_head_is_reloaded_too(tiny_model_dir, tmp_path):
    """A model with its own head weights: the direct reload loads them and repacks the head."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from worker.trainer.inference.server import VLLMServer
    from worker.trainer.weight_sync.filesystem import FilesystemWeightSync

    untied_dir = tmp_path / "untied"
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32)
    model.config.tie_word_embeddings = False
    model.lm_head.weight = torch.nn.Parameter(model.lm_head.weight.detach().clone())
    model.save_pretrained(untied_dir)
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    tokenizer.save_pretrained(untied_dir)
    ids = tokenizer(TEXT, add_special_tokens=False).input_ids

    config = TrainingConfig(max_prompt_length=64, max_completion_length=16, vllm_kv_cache_gib=1)
    with VLLMServer.for_config(str(untied_dir), config, log_path=tmp_path / "vllm.log", dtype="float32") as server:
        server.wait_until_healthy()
        sync = FilesystemWeightSync(server.url, tmp_path, dtype="float32")
        try:
            perturbed(model, seed=5)
            with torch.no_grad():
                model.lm_head.weight.normal_(0.0, 0.2)  # the head alone moves far
            sync.push(model, version=1)
            assert sync.last_reload["reload"] == "direct", sync.last_reload
            assert (served_logprobs(server, ids) - trainer_logprobs(model, ids)).abs().max() < TOLERANCE
        finally:
            sync.close()


def test_a_lora_run_serves_each_pushed_adapter_and_merged_weights_alike(tiny_model_dir, tmp_path):
    """One server with LoRA on: the adapter sync loads each version in place under one name and
    the server keeps it in memory (its files may go), and the merged weights of the same model,
    reloaded as a whole model, serve the same."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from worker.trainer.training import lora
    from worker.trainer.inference.server import VLLMServer
    from worker.trainer.weight_sync.filesystem import FilesystemWeightSync
    from worker.trainer.weight_sync.lora_adapter import ADAPTER_NAME, LoraAdapterSync

    config = TrainingConfig(max_prompt_length=64, max_completion_length=16, vllm_kv_cache_gib=1, lora=True, lora_r=8,
                            lora_serving="adapter")
    ids = AutoTokenizer.from_pretrained(tiny_model_dir)(TEXT, add_special_tokens=False).input_ids
    model = lora.attach_adapter(AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32), config)
    with VLLMServer.for_config(str(tiny_model_dir), config, log_path=tmp_path / "vllm.log", dtype="float32") as server:
        server.wait_until_healthy()
        adapter_sync = LoraAdapterSync(server.url, tmp_path / "out", dtype="float32")
        merged_sync = FilesystemWeightSync(server.url, tmp_path, dtype="float32")
        try:
            for version in (1, 2):
                with torch.no_grad():
                    for name, parameter in model.named_parameters():
                        if "lora_" in name:
                            parameter.normal_(std=0.05, generator=torch.Generator().manual_seed(version))
                adapter_sync.push(lora.served_weights(model), version)
                served = served_logprobs(server, ids, ADAPTER_NAME)
                assert (served - trainer_logprobs(model, ids)).abs().max() < TOLERANCE, f"adapter {version}"
            assert adapter_sync.last_push_parts().keys() == {"write", "server_load"}
            assert adapter_sync.kept_in_memory == {"kept": True, "why_not": None}
            for folder in adapter_sync.folder.iterdir():  # the server serves from memory, not the files
                shutil.rmtree(folder)
            assert (served_logprobs(server, ids, ADAPTER_NAME) - served).abs().max() == 0
            merged_sync.push(lora.served_weights(model), version=3)
            assert (served_logprobs(server, ids) - served).abs().max() < TOLERANCE
        finally:
            adapter_sync.close()
            merged_sync.close()
