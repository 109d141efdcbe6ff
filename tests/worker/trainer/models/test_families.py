"""Log-probs and entropy equal each family's own forward, one completion a row and packed."""
import json

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from worker.trainer.training.batching import Row, micro_batches  # noqa: E402
from worker.trainer.models.families import (  # noqa: E402
    FAMILY_LOGITS, LogitTransform, UnsupportedFamily, family_problem, logit_transform_of,
)
from worker.trainer.models.tiny import tiny_family_config  # noqa: E402
from worker.trainer.training.policy import completion_logprobs  # noqa: E402

VOCAB = 64
# Prompts and completions longer than the tiny models' sliding window (4).
GROUP = [Row([5, 6, 7, 8, 9, 10], completion, [-0.5] * len(completion), advantage, group=0)
         for completion, advantage in (([21, 22, 23, 24, 25, 26], 1.0), ([27, 28], -0.5),
                                       ([29, 30, 31, 32, 33], 0.25))]
ALONE = [Row([11, 12, 13], [40, 41, 42, 43, 44, 45, 46], [-0.1] * 7, -1.0, group=1)]
TRANSFORMING = [family for family, (kind, _) in FAMILY_LOGITS.items() if kind != "none"]


def tiny_model(model_type: str):
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(tiny_family_config(model_type, VOCAB), dtype=torch.float32)
    with torch.no_grad():  # random weights this small give near-uniform logits: sharpen them
        model.get_output_embeddings().weight.mul_(20.0)
    return model.eval()


def forward_logprobs(model, row: Row, temperature: float):
    """The model's own forward on the row alone: its logits, log-softmax, the completion's tokens."""
    ids = torch.tensor([row.prompt_ids + row.completion_ids])
    logits = model(input_ids=ids).logits[0, :-1].float() / temperature
    logp_all = torch.log_softmax(logits, -1)[len(row.prompt_ids) - 1:]
    token_logp = logp_all.gather(1, torch.tensor(row.completion_ids).unsqueeze(1)).squeeze(1)
    return token_logp, -(logp_all.exp() * logp_all).sum(-1)


def batch_rows(share_prompts: bool) -> list[Row]:
    """The rows in the order micro_batches lays them out (batching.py)."""
    if share_prompts:
        return sorted(GROUP + ALONE, key=lambda row: (row.group, len(row.completion_ids)))
    return sorted(GROUP + ALONE, key=lambda row: row.length)


@pytest.mark.parametrize("share_prompts", [False, True], ids=["row-each", "packed"])
@pytest.mark.parametrize("model_type", sorted(FAMILY_LOGITS))
def test_logprobs_and_entropy_equal_the_models_forward(model_type, share_prompts):
    model, temperature = tiny_model(model_type), 0.7
    batch = micro_batches(GROUP + ALONE, size=8, pad_id=0, share_prompts=share_prompts)[0]
    with torch.no_grad():
        ours, entropy = completion_logprobs(model, batch, temperature, with_entropy=True)
        expected = [forward_logprobs(model, row, temperature) for row in batch_rows(share_prompts)]
    for s, (token_logp, _) in enumerate(expected):
        assert torch.allclose(ours[s, :len(token_logp)], token_logp, atol=1e-4), (model_type, s)
    assert entropy == pytest.approx(torch.cat([e for _, e in expected]).mean().item(), abs=1e-4)


@pytest.mark.parametrize("model_type", TRANSFORMING)
def test_leaving_out_the_familys_transform_would_change_the_logprobs(model_type):
    """The check above has teeth: without the transform these families' numbers differ."""
    model = tiny_model(model_type)
    batch = micro_batches(GROUP, size=8, pad_id=0, share_prompts=False)[0]
    with torch.no_grad():
        ours, _ = completion_logprobs(model, batch, 1.0)
        model.config.model_type = "llama"  # read as a family without a transform
        plain, _ = completion_logprobs(model, batch, 1.0)
    assert (ours - plain).abs().max() > 1e-2


def test_an_unknown_family_is_refused_with_the_supported_ones_named():
    config = transformers.PretrainedConfig()
    config.model_type = "falcon_mamba"
    with pytest.raises(UnsupportedFamily, match="'falcon_mamba' is not supported.*gemma2.*qwen2"):
        logit_transform_of(config)
    assert family_problem("qwen3") is None


def test_soft_capping_bounds_the_logits_and_scales_are_exact():
    logits = torch.tensor([-100.0, 0.0, 3.0])
    assert LogitTransform("softcap", 2.0)(logits).abs().max() <= 2.0
    assert LogitTransform("scale", 0.5)(logits).tolist() == [-50.0, 0.0, 1.5]
    assert LogitTransform("divide", 4.0)(logits).tolist() == [-25.0, 0.0, 0.75]
    assert not LogitTransform("softcap", 2.0).is_linear and LogitTransform("scale", 0.5).is_linear


def write_config(folder, model_type: str):
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": model_type}))
    return str(folder)


def test_a_local_model_of_an_unknown_family_is_a_problem_on_the_model_field_here(tmp_path, monkeypatch):
    monkeypatch.setenv("MODEL_DIRS", str(tmp_path))  # a folder the operator lets runs name models in

    from worker.trainer.config import TrainingConfig
    from worker.trainer.machine_checks import problems_here

    ((field, message),) = problems_here(TrainingConfig(model=write_config(tmp_path / "mamba", "falcon_mamba")))
    assert field == "model" and "'falcon_mamba' is not supported" in message
    assert problems_here(TrainingConfig(model=write_config(tmp_path / "gemma", "gemma2"))) == []
    assert problems_here(TrainingConfig(model="some-org/not-downloaded-here")) == []  # the worker checks it


def test_the_trainer_refuses_an_unknown_family_before_loading_weights(tmp_path):
    from worker.trainer.training.setup import refuse_unsupported_family

    config = transformers.PretrainedConfig()
    config.model_type = "rwkv"
    with pytest.raises(UnsupportedFamily, match="'rwkv' is not supported"):
        refuse_unsupported_family(config)
