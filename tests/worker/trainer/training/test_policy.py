"""Batching and completion log-probs: packed prompts give the numbers of one row per completion."""
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from worker.trainer.training.batching import Row, collate, micro_batches, pack, packing_mask  # noqa: E402
from worker.trainer.training.policy import completion_logprobs, padded_to_multiple  # noqa: E402


def tiny_model():
    config = transformers.LlamaConfig(vocab_size=40, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                      num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64,
                                      tie_word_embeddings=True)
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(config).eval()


ROWS = [Row([1, 2, 3], [4, 5], [-1.0, -2.0], 0.5, group=0), Row([6], [7, 8, 9], [-0.1, -0.2, -0.3], -1.0, group=1)]
# One group: a prompt of 4 and three completions of different lengths.
GROUP = [Row([11, 12, 13, 14], completion, [-0.5] * len(completion), advantage, group=0)
         for completion, advantage in (([21, 22, 23], 1.0), ([24, 25], -0.5), ([26, 27, 28, 29], 0.25))]


def reference_logprobs(model, row: Row, temperature: float) -> torch.Tensor:
    """The plain computation: the row alone, full logits, log-softmax."""
    ids = torch.tensor([row.prompt_ids + row.completion_ids])
    logits = model(input_ids=ids).logits[0, :-1] / temperature
    logp = torch.log_softmax(logits.float(), -1).gather(1, ids[0, 1:].unsqueeze(1)).squeeze(1)
    return logp[len(row.prompt_ids) - 1:]


def test_one_completion_per_row_marks_the_positions_that_predict_completion_tokens():
    batch = collate([pack([row]) for row in ROWS], pad_id=0)
    assert batch.input_ids.tolist() == [[1, 2, 3, 4, 5], [6, 7, 8, 9, 0]]
    assert batch.attention_mask.tolist() == [[1, 1, 1, 1, 1], [1, 1, 1, 1, 0]]  # 2D: FlashAttention stays usable
    # Row 0 predicts 4 from position 2 and 5 from 3; row 1 (offset 5) predicts 7, 8, 9 from 5, 6, 7.
    assert batch.sources.tolist() == [[2, 3, 0], [5, 6, 7]]
    assert batch.mask.tolist() == [[1, 1, 0], [1, 1, 1]]
    assert batch.sampler_logp[1].tolist() == pytest.approx([-0.1, -0.2, -0.3])
    assert batch.completion_tokens == 5 and batch.tokens == 9


def test_packing_lays_out_the_prompt_once_and_restarts_positions_per_completion():
    packed = pack(GROUP)
    assert packed.ids == [11, 12, 13, 14, 21, 22, 23, 24, 25, 26, 27, 28, 29]
    assert packed.positions == [0, 1, 2, 3, 4, 5, 6, 4, 5, 4, 5, 6, 7]
    assert packed.sources == [[3, 4, 5], [3, 7], [3, 9, 10, 11]]


def test_the_packing_mask_is_causal_and_keeps_completions_apart():
    segments = torch.tensor([[0, 0, 1, 1, 2, -1]])
    mask = packing_mask(segments)[0, 0]
    assert mask[3].tolist() == [True, True, True, True, False, False]   # 2nd token of completion 1
    assert mask[4].tolist() == [True, True, False, False, True, False]  # completion 2 skips completion 1
    assert mask[1].tolist() == [True, True, False, False, False, False]  # the prompt sees only the prompt
    assert mask[5].tolist() == [False] * 5 + [True]                       # padding sees itself


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_packed_logprobs_equal_each_completion_computed_alone(temperature):
    model = tiny_model()
    batch = micro_batches(GROUP + ROWS[1:], size=8, pad_id=0)[0]
    assert batch.tokens == 13 + 4  # the group's prompt once, then the other row
    ours, entropy = completion_logprobs(model, batch, temperature, with_entropy=True)
    ordered = sorted(GROUP, key=lambda row: len(row.completion_ids)) + ROWS[1:]
    for s, row in enumerate(ordered):
        n = len(row.completion_ids)
        assert torch.allclose(ours[s, :n], reference_logprobs(model, row, temperature), atol=1e-5), s
        assert (ours[s, n:] == 0).all()
    assert batch.advantages.tolist() == [row.advantage for row in ordered]
    assert entropy == pytest.approx(reference_entropy(model, ordered, temperature), abs=1e-5)


def reference_entropy(model, rows: list[Row], temperature: float) -> float:
    """Mean entropy of the distributions that predicted each completion token."""
    entropies = []
    for row in rows:
        ids = torch.tensor([row.prompt_ids + row.completion_ids])
        logits = model(input_ids=ids).logits[0, len(row.prompt_ids) - 1:-1].float() / temperature
        probs = torch.softmax(logits, -1)
        entropies.append(-(probs * probs.log()).sum(-1))
    return torch.cat(entropies).mean().item()


def test_a_head_with_a_bias_divides_its_logits_by_the_temperature():
    torch.manual_seed(0)
    head = torch.nn.Linear(4, 40)
    batch = micro_batches(ROWS, size=2, pad_id=0, share_prompts=False)[0]

    class WithBias(torch.nn.Module):  # the decoder's hidden states are its input embeddings
        config = transformers.LlamaConfig()

        def get_decoder(self):
            return lambda input_ids, **_: type("Out", (), {"last_hidden_state": embed(input_ids)})

        def get_output_embeddings(self):
            return head
    embed = torch.nn.Embedding(40, 4)
    ours, _ = completion_logprobs(WithBias(), batch, 0.5)
    for s, row in enumerate(sorted(ROWS, key=lambda row: row.length)):
        ids = torch.tensor(row.prompt_ids + row.completion_ids)
        logp = torch.log_softmax(head(embed(ids[:-1])) / 0.5, -1).gather(1, ids[1:].unsqueeze(1)).squeeze(1)
        assert torch.allclose(ours[s, :len(row.completion_ids)], logp[len(row.prompt_ids) - 1:], atol=1e-5)


def test_unpacked_logprobs_equal_the_plain_computation():
    model = tiny_model()
    batch = micro_batches(ROWS, size=2, pad_id=0, share_prompts=False)[0]
    ours, _ = completion_logprobs(model, batch, 1.0)
    for s, row in enumerate(sorted(ROWS, key=lambda row: row.length)):
        assert torch.allclose(ours[s, :len(row.completion_ids)], reference_logprobs(model, row, 1.0), atol=1e-5)


def test_micro_batches_keep_a_groups_completions_together_when_sharing_prompts():
    rows = [Row([g] * 5, [2] * n, [-1.0] * n, 0.0, group=g) for g in (0, 1) for n in (3, 1, 2, 4)]
    batches = micro_batches(rows, size=4, pad_id=0)
    assert [b.input_ids.shape for b in batches] == [(1, 5 + 10), (1, 5 + 10)]
    assert [b.mask.sum(1).tolist() for b in batches] == [[1, 2, 3, 4], [1, 2, 3, 4]]


def test_micro_batches_without_sharing_group_rows_of_similar_length():
    rows = [Row([1] * n, [2], [-1.0], 0.0) for n in (9, 1, 8, 2)]
    batches = micro_batches(rows, size=2, pad_id=0, share_prompts=False)
    assert [b.input_ids.shape[1] for b in batches] == [3, 10]


def test_gradients_reach_the_weights_through_a_packed_prompt():
    model = tiny_model()
    logp, _ = completion_logprobs(model, micro_batches(GROUP, size=3, pad_id=0)[0], 1.0)
    logp.sum().backward()
    assert model.get_output_embeddings().weight.grad.abs().sum() > 0
    assert model.model.layers[0].self_attn.q_proj.weight.grad.abs().sum() > 0


def test_rows_padded_to_a_multiple_give_the_same_logprobs():
    model = tiny_model()
    plain = micro_batches(GROUP + ROWS[1:], size=8, pad_id=0)[0]
    padded = micro_batches(GROUP + ROWS[1:], size=8, pad_id=0, shape_multiple=8)[0]
    assert plain.input_ids.shape == (2, 13) and padded.input_ids.shape == (2, 16)
    assert padded.tokens == plain.tokens  # padding is not counted as trained tokens
    assert torch.allclose(completion_logprobs(model, padded, 1.0)[0], completion_logprobs(model, plain, 1.0)[0],
                          atol=1e-5)


def test_unpacked_rows_padded_to_a_multiple_give_the_same_logprobs():
    model = tiny_model()
    plain = micro_batches(ROWS, size=2, pad_id=0, share_prompts=False)[0]
    padded = micro_batches(ROWS, size=2, pad_id=0, share_prompts=False, shape_multiple=4)[0]
    assert padded.input_ids.shape[1] % 4 == 0 and padded.input_ids.shape[1] > plain.input_ids.shape[1]
    assert torch.allclose(completion_logprobs(model, padded, 1.0)[0], completion_logprobs(model, plain, 1.0)[0],
                          atol=1e-5)


def test_positions_for_the_head_are_padded_with_the_first_one():
    assert padded_to_multiple(torch.tensor([5, 6, 7]), 4).tolist() == [5, 6, 7, 5]
    assert padded_to_multiple(torch.tensor([5, 6, 7, 8]), 4).tolist() == [5, 6, 7, 8]
    assert padded_to_multiple(torch.tensor([5, 6, 7]), 1).tolist() == [5, 6, 7]


def test_padding_for_the_head_leaves_the_gradients_unchanged():
    """The padded micro-batch feeds 16 positions to the head instead of 9; the extra ones must
    not reach the loss or the weights."""
    plain = micro_batches(GROUP, size=3, pad_id=0)[0]
    padded = micro_batches(GROUP, size=3, pad_id=0, shape_multiple=16)[0]
    assert int(plain.mask.sum()) == 9 and padded.shape_multiple == 16
    grads = []
    for batch in (plain, padded):
        model = tiny_model()
        logp, _ = completion_logprobs(model, batch, 0.7)
        (logp * torch.arange(logp.numel()).reshape(logp.shape)).sum().backward()
        grads.append([p.grad.clone() for p in model.parameters()])
    for plain_grad, padded_grad in zip(*grads):
        assert torch.allclose(plain_grad, padded_grad, atol=1e-5)
