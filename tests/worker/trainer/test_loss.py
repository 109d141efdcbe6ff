"""Every loss type, clipping, importance correction and KL, on tiny tensors worked out by hand."""
import math

import pytest

torch = pytest.importorskip("torch")

from worker.trainer.algorithm.loss import (  # noqa: E402
    LossInputs, LossSettings, aggregate, grpo_loss, importance_weights, k3_kl,
)

MASK = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
ADVANTAGES = torch.tensor([1.0, -1.0])


def on_policy(ratio=1.0, sampler_shift=0.0):
    """Inputs whose PPO ratio is `ratio` and whose sampler log-probs are `sampler_shift` below."""
    logp = torch.log(torch.full((2, 2), 0.5)).requires_grad_()
    old = logp.detach() - math.log(ratio)
    return LossInputs(logp=logp, old_logp=old, sampler_logp=old - sampler_shift, advantages=ADVANTAGES, mask=MASK)


@pytest.mark.parametrize(("loss_type", "expected"), [
    ("dapo", -1 / 3),      # (-1 - 1 + 1) over 3 real tokens
    ("bnpo", -1 / 3),      # same, normalized by this micro-batch's tokens
    ("grpo", 0.0),         # per-sequence means -1 and +1, averaged
    ("dr_grpo", -1 / 8),   # sum over 2 sequences × max_completion_length 4
])
def test_loss_types_aggregate_tokens_as_documented(loss_type, expected):
    settings = LossSettings(loss_type=loss_type, max_completion_length=4)
    loss, _ = grpo_loss(on_policy(), settings)
    assert loss.item() == pytest.approx(expected)


def test_dapo_normalizes_by_the_tokens_of_the_whole_step():
    loss, _ = grpo_loss(on_policy(), LossSettings(loss_type="dapo"), tokens_in_batch=6)
    assert loss.item() == pytest.approx(-1 / 6)


def test_unknown_loss_type_is_an_error():
    with pytest.raises(ValueError, match="loss_type"):
        aggregate(torch.ones(2, 2), MASK, LossSettings(loss_type="mean"))


def test_ratio_above_the_upper_bound_is_clipped_for_positive_advantages():
    x = on_policy(ratio=1.5)
    settings = LossSettings(loss_type="bnpo", epsilon=0.2, epsilon_high=0.28, importance_correction=False)
    loss, metrics = grpo_loss(x, settings)
    # sequence 1 (A=+1): min(1.5, 1.28) → -1.28 per token; sequence 2 (A=-1): min(-1.5, -1.28) → +1.5
    assert loss.item() == pytest.approx((-1.28 * 2 + 1.5) / 3)
    assert metrics["train/clip_ratio_high"] == pytest.approx(2 / 3)
    assert metrics["train/clip_ratio_low"] == 0.0
    loss.backward()
    assert x.logp.grad[0].abs().sum().item() == 0.0  # clipped tokens carry no gradient
    assert x.logp.grad[1, 0].item() != 0.0


def test_ratio_below_the_lower_bound_is_clipped_for_negative_advantages():
    _, metrics = grpo_loss(on_policy(ratio=0.5), LossSettings(importance_correction=False))
    assert metrics["train/clip_ratio_low"] == pytest.approx(1 / 3)
    assert metrics["train/clip_ratio_region"] == pytest.approx(1 / 3)


def test_epsilon_high_defaults_to_epsilon():
    loss, _ = grpo_loss(on_policy(ratio=1.5), LossSettings(loss_type="bnpo", epsilon=0.2, epsilon_high=None,
                                                              importance_correction=False))
    assert loss.item() == pytest.approx((-1.2 * 2 + 1.5) / 3)


def test_importance_weight_is_truncated_at_the_cap():
    weights = importance_weights(torch.zeros(3), torch.log(torch.tensor([1.0, 0.5, 1 / 3])), "truncate", cap=2.0)
    assert weights.tolist() == pytest.approx([1.0, 2.0, 2.0])


def test_importance_weight_beyond_the_cap_is_masked():
    weights = importance_weights(torch.zeros(3), torch.log(torch.tensor([1.0, 0.5, 1 / 3])), "mask", cap=2.0)
    assert weights.tolist() == pytest.approx([1.0, 2.0, 0.0])


def test_importance_correction_scales_the_token_loss():
    x = on_policy(sampler_shift=math.log(1.5))  # the sampler was less sure: w = 1.5
    corrected, metrics = grpo_loss(x, LossSettings(loss_type="bnpo", importance_cap=2.0))
    plain, _ = grpo_loss(on_policy(), LossSettings(loss_type="bnpo", importance_correction=False))
    assert corrected.item() == pytest.approx(1.5 * plain.item())
    assert metrics["train/importance_ratio_mean"] == pytest.approx(1.5)
    assert metrics["train/kl_to_sampler"] > 0


def test_k3_kl_matches_the_formula_and_is_zero_for_equal_policies():
    value = k3_kl(torch.log(torch.tensor([0.5])), torch.log(torch.tensor([0.25])))
    assert value.item() == pytest.approx(0.5 + math.log(2) - 1)
    assert k3_kl(torch.zeros(3), torch.zeros(3)).tolist() == [0.0, 0.0, 0.0]


def test_beta_adds_the_kl_to_the_reference():
    x = on_policy()
    x.ref_logp = x.logp.detach() + math.log(0.5)
    loss, metrics = grpo_loss(x, LossSettings(loss_type="bnpo", beta=0.1, importance_correction=False))
    kl = 0.5 - math.log(0.5) - 1
    assert loss.item() == pytest.approx(-1 / 3 + 0.1 * kl)
    assert metrics["train/kl_to_reference"] == pytest.approx(kl)


def test_beta_without_reference_is_an_error():
    with pytest.raises(ValueError, match="reference"):
        grpo_loss(on_policy(), LossSettings(beta=0.1))
