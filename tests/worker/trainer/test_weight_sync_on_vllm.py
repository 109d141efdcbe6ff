"""Weight sync into a real vLLM server: what it serves afterwards is the trainer's model, tied head included.

About 30 s (vLLM's start on the tiny model). The tiny model ties its output head to its
embeddings, as SmolLM2 does: vLLM's own reload left such a head with its old weights.
"""
import httpx
import pytest

from worker.trainer.config import TrainingConfig

TEXT = "The capital of France is Paris, and the capital of Italy is Rome."


def trainer_logprobs(model, ids: list[int]):
    import torch

    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0, :-1].float()
    return torch.log_softmax(logits, -1).gather(1, torch.tensor(ids[1:])[:, None])[:, 0]


def served_logprobs(server, ids: list[int]):
    import torch

    response = httpx.post(f"{server.url}/v1/completions", timeout=60, json={
        "model": server.served_model_name, "prompt": ids, "max_tokens": 1, "prompt_logprobs": 0, "temperature": 1.0})
    response.raise_for_status()
    entries = response.json()["choices"][0]["prompt_logprobs"][1:]
    return torch.tensor([entry[str(token)]["logprob"] for token, entry in zip(ids[1:], entries)])


def test_after_a_sync_the_server_computes_the_trainers_log_probs(tiny_model_dir, tmp_path):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from worker.trainer.inference.server import VLLMServer
    from worker.trainer.weight_sync.filesystem import FilesystemWeightSync

    ids = AutoTokenizer.from_pretrained(tiny_model_dir)(TEXT, add_special_tokens=False).input_ids
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32)
    old_head = model.lm_head.weight.detach().clone()
    config = TrainingConfig(max_prompt_length=64, max_completion_length=16, vllm_kv_cache_gib=1)
    # Served in float32 whatever this machine prefers: bf16 would round the log-probs of this
    # random model (around -25) by up to 0.1, hiding a small error in the sync.
    with VLLMServer.for_config(str(tiny_model_dir), config, log_path=tmp_path / "vllm.log", dtype="float32") as server:
        server.wait_until_healthy()
        tolerance = 1e-3
        sync = FilesystemWeightSync(server.url, tmp_path, dtype="float32")
        try:
            for version in (1, 2):  # the second sync rewrites the file the first one wrote
                with torch.no_grad():
                    torch.manual_seed(version)
                    model.model.embed_tokens.weight.normal_(0.0, 0.2)  # the tied head changes with it
                sync.push(model, version=version)
                served = served_logprobs(server, ids)
                assert (served - trainer_logprobs(model, ids)).abs().max() < tolerance, f"after sync {version}"
        finally:
            sync.close()
    with torch.no_grad():
        model.lm_head.weight = torch.nn.Parameter(old_head)  # the new body through the old head
    assert (served - trainer_logprobs(model, ids)).abs().max() > 10 * tolerance
