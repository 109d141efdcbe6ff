"""Group-normalized advantages and reward combination, against values worked out by hand."""
import math

import pytest

torch = pytest.importorskip("torch")

from worker.trainer.algorithm.advantages import combine_rewards, group_advantages  # noqa: E402

NAN = float("nan")


def test_weighted_sum_skips_functions_that_do_not_apply():
    per_function = torch.tensor([[1.0, NAN], [NAN, NAN], [0.5, 1.0]])
    assert combine_rewards(per_function, torch.tensor([1.0, 2.0])).tolist() == [1.0, 0.0, 2.5]


def test_group_scaling_divides_by_each_groups_std():
    result = group_advantages(torch.tensor([1.0, 0.0, 1.0, 0.0]), group_size=2, scale="group")
    std = math.sqrt(0.5)  # unbiased std of {1, 0}
    expected = 0.5 / (std + 1e-4)
    assert result.values.tolist() == pytest.approx([expected, -expected, expected, -expected])
    assert result.group_mean.tolist() == [0.5, 0.5]


def test_batch_scaling_divides_by_the_batch_std():
    result = group_advantages(torch.tensor([1.0, 0.0, 1.0, 0.0]), group_size=2, scale="batch")
    batch_std = math.sqrt(1.0 / 3.0)  # unbiased std of {1, 0, 1, 0}
    assert result.values[0].item() == pytest.approx(0.5 / (batch_std + 1e-4))


def test_no_scaling_leaves_the_centred_reward():
    result = group_advantages(torch.tensor([3.0, 1.0, 2.0, 2.0]), group_size=2, scale="none")
    assert result.values.tolist() == [1.0, -1.0, 0.0, 0.0]


def test_group_with_equal_rewards_has_zero_advantage_and_is_counted():
    result = group_advantages(torch.tensor([1.0, 1.0, 1.0, 0.0]), group_size=2)
    assert result.values[:2].tolist() == [0.0, 0.0]
    assert result.frac_zero_std == 0.5


def test_rewards_that_do_not_split_into_groups_are_an_error():
    with pytest.raises(ValueError, match="groups of 4"):
        group_advantages(torch.ones(6), group_size=4)


def test_unknown_scaling_is_an_error():
    with pytest.raises(ValueError, match="scale_rewards"):
        group_advantages(torch.ones(4), group_size=2, scale="median")
