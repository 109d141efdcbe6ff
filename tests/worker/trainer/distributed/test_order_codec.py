"""Orders round-trip through signed JSON; anything not signed by the run's secret, or not an
order the leader sends, is refused before a follower acts on it."""
import json

import pytest

from worker.trainer.distributed.order_codec import Order, OrderRefused, decode_order, encode_order
from worker.trainer.rollout.groups import Completion, Group

SECRET = "a1" * 32


def lean_group() -> Group:
    return Group(prompt_index=7, prompt_text="", prompt_ids=[1, 2, 3], columns={},
                 completions=[Completion([4, 5], [-0.5, float("-inf")], "", "length", loss_mask=[1, 1])],
                 model_version=2, totals=[0.25])


@pytest.mark.parametrize("order", [
    Order("setup", {"resume_from": None}), Order("setup", {"resume_from": "/ckpt/step-0000004"}),
    Order("train", {"groups": [lean_group()]}), Order("gather"), Order("save", {"step": 12}), Order("stop")])
def test_every_order_the_leader_sends_comes_back_equal(order):
    assert decode_order(encode_order(order, 3, SECRET), 3, SECRET) == order


def test_an_order_replayed_under_another_number_is_refused():
    message = encode_order(Order("save", {"step": 1}), 3, SECRET)
    with pytest.raises(OrderRefused, match="order 4 .* failed its HMAC check"):
        decode_order(message, 4, SECRET)


def test_an_altered_order_is_refused():
    mac, _, body = encode_order(Order("save", {"step": 1}), 1, SECRET).partition(b"\n")
    with pytest.raises(OrderRefused, match="HMAC"):
        decode_order(mac + b"\n" + body.replace(b"1", b"2"), 1, SECRET)


def test_pickled_bytes_are_refused_without_being_unpickled():
    import pickle

    with pytest.raises(OrderRefused, match="HMAC"):
        decode_order(pickle.dumps(Order("stop")), 1, SECRET)


def _signed(data: dict, number: int = 1) -> bytes:
    """A message signed with the right secret but carrying what the leader never sends."""
    from worker.trainer.distributed.order_codec import _mac

    body = json.dumps(data).encode()
    return _mac(SECRET, number, body).encode() + b"\n" + body


@pytest.mark.parametrize("data, refusal", [
    ({"what": "exec", "payload": {}}, "not an order"),
    ({"what": "save", "payload": {"step": 1, "path": "/etc"}}, "not an order"),
    ({"what": "save", "payload": {"step": "1"}}, "integer"),
    ({"what": "train", "payload": {"groups": [{"prompt_index": 1}]}}, "malformed"),
])
def test_a_signed_message_that_is_not_a_leaders_order_is_refused(data, refusal):
    with pytest.raises(OrderRefused, match=refusal):
        decode_order(_signed(data), 1, SECRET)


def test_a_group_with_its_episode_does_not_travel():
    from worker.trainer.rollout.groups import EpisodeRecord

    group = lean_group()
    group.completions[0].episode = EpisodeRecord(turns=[], end_reason="done")
    with pytest.raises(ValueError, match="episodes stay with the leader"):
        encode_order(Order("train", {"groups": [group]}), 1, SECRET)
