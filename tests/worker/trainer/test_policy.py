"""Batching and completion log-probs: same numbers as the plain full-logits computation."""
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from worker.trainer.batching import Row, collate, micro_batches  # noqa: E402
from worker.trainer.policy import completion_logprobs  # noqa: E402


def tiny_model():
    config = transformers.LlamaConfig(vocab_size=40, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                      num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64,
                                      tie_word_embeddings=True)
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(config).eval()


ROWS = [Row([1, 2, 3], [4, 5], [-1.0, -2.0], 0.5), Row([6], [7, 8, 9], [-0.1, -0.2, -0.3], -1.0)]


def test_collate_marks_exactly_the_positions_that_predict_completion_tokens():
    batch = collate(ROWS, pad_id=0)
    assert batch.input_ids.tolist() == [[1, 2, 3, 4, 5], [6, 7, 8, 9, 0]]
    assert batch.target_mask.tolist() == [[0, 0, 1, 1], [1, 1, 1, 0]]
    assert batch.sampler_logp[1, :3].tolist() == pytest.approx([-0.1, -0.2, -0.3])
    assert batch.completion_tokens == 5 and batch.tokens == 9


def test_micro_batches_group_rows_of_similar_length():
    rows = [Row([1] * n, [2], [-1.0], 0.0) for n in (9, 1, 8, 2)]
    batches = micro_batches(rows, size=2, pad_id=0)
    assert [b.input_ids.shape[1] for b in batches] == [3, 10]


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_logprobs_match_the_full_logits_computation(temperature):
    model = tiny_model()
    batch = collate(ROWS, pad_id=0)
    ours, entropy = completion_logprobs(model, batch, temperature, with_entropy=True)
    logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits[:, :-1] / temperature
    reference = torch.log_softmax(logits.float(), -1).gather(2, batch.input_ids[:, 1:].unsqueeze(2)).squeeze(2)
    mask = batch.target_mask.bool()
    assert torch.allclose(ours[mask], reference[mask], atol=1e-5)
    assert (ours[~mask] == 0).all()
    assert 0 < entropy <= torch.log(torch.tensor(40.0)).item()


def test_logprobs_carry_gradients_to_the_weights():
    model = tiny_model()
    logp, _ = completion_logprobs(model, collate(ROWS, pad_id=0), 1.0)
    logp.sum().backward()
    assert model.get_output_embeddings().weight.grad.abs().sum() > 0
