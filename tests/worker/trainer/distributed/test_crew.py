"""The leader's orders reach every follower once, in order, and the store keeps none of them."""
import pytest

from worker.trainer.distributed.crew import Crew, OrderChannel, lean_group
from worker.trainer.distributed.order_codec import Order, OrderRefused
from worker.trainer.distributed.topology import Topology
from worker.trainer.rollout.groups import Completion, EpisodeRecord, Group

SECRET = "5" * 64


def channel(rank: int, world_size: int, store, secret: str = SECRET) -> OrderChannel:
    return OrderChannel(Topology(rank=rank, world_size=world_size), secret, store)


class DictStore:
    """The calls OrderChannel makes of torch's c10d store, over a dict."""

    def __init__(self):
        self.values: dict[str, bytes | int] = {}

    def set(self, key, value):
        self.values[key] = value

    def get(self, key):
        return self.values[key]

    def wait(self, keys, timeout):
        missing = [key for key in keys if key not in self.values]
        if missing:
            raise RuntimeError(f"timed out waiting for {missing}")

    def add(self, key, amount):
        self.values[key] = self.values.get(key, 0) + amount
        return self.values[key]

    def delete_key(self, key):
        return self.values.pop(key, None) is not None


def group() -> Group:
    episode = EpisodeRecord(turns=[{"role": "assistant"}], end_reason="done", environment_state=lambda: None)
    return Group(prompt_index=3, prompt_text="2+2?", prompt_ids=[1, 2], columns={"answer": "4"},
                 completions=[Completion([5, 6], [-0.1, -0.2], "four", "stop", loss_mask=[1, 0], episode=episode)],
                 model_version=1, rewards={"correct": [1.0]}, totals=[1.0])


def test_each_follower_reads_every_order_in_order_and_the_last_reader_deletes_it():
    store = DictStore()
    leader = Crew(Topology(rank=0, world_size=3), channel(0, 3, store))
    followers = [channel(r, 3, store) for r in (1, 2)]
    leader.setup("/checkpoints/step-0000010")
    leader.train([group()])
    leader.dismiss()
    for follower in followers:
        orders = [follower.receive() for _ in range(3)]
        assert [o.what for o in orders] == ["setup", "train", "stop"]
        assert orders[0].payload == {"resume_from": "/checkpoints/step-0000010"}
        assert orders[1].payload["groups"] == [lean_group(group())]  # the same group, from JSON
    assert store.values == {}


def test_a_gather_is_ordered_only_when_the_model_is_sharded():
    store = DictStore()
    leader = Crew(Topology(rank=0, world_size=2), channel(0, 2, store))
    leader.gather_weights()
    assert store.values == {}
    leader.strategy = "fsdp2"
    leader.gather_weights()
    assert list(store.values) == ["order/1"]


def test_one_process_sends_nothing():
    crew = Crew(Topology())
    assert crew.channel is None
    crew.setup(None)
    crew.train([group()])
    assert not crew.listening  # no followers to dismiss
    crew.dismiss()


def test_a_followers_group_keeps_what_training_reads_and_drops_what_may_not_travel():
    lean = lean_group(group())
    completion = lean.completions[0]
    assert (lean.prompt_ids, lean.totals, completion.token_ids, completion.logprobs, completion.loss_mask) == (
        [1, 2], [1.0], [5, 6], [-0.1, -0.2], [1, 0])
    assert completion.episode is None and lean.columns == {} and lean.prompt_text == ""


class FlakyStore(DictStore):
    """A store whose waits first fail as given, then see the leader's order."""

    def __init__(self, failures):
        super().__init__()
        self.failures = list(failures)

    def wait(self, keys, timeout):
        if self.failures:
            raise self.failures.pop(0)
        super().wait(keys, timeout)


def test_a_follower_waits_through_the_stores_timeouts_but_not_past_its_end():
    from torch.distributed import DistNetworkError, DistStoreError

    store = FlakyStore([DistStoreError("wait timeout after 30000ms"), DistStoreError("wait timeout after 30000ms")])
    Crew(Topology(rank=0, world_size=2), channel(0, 2, store)).setup(None)
    assert channel(1, 2, store).receive().what == "setup"
    # torchrun, which serves the store, is gone: the follower ends rather than polling a dead socket.
    gone = FlakyStore([DistNetworkError("Failed to recv, got 0 bytes. Connection was likely closed.")])
    with pytest.raises(DistNetworkError):
        channel(1, 2, gone).receive()


def test_an_order_signed_with_another_secret_is_refused():
    store = DictStore()
    channel(0, 2, store, secret="6" * 64).send(Order("stop"))
    with pytest.raises(OrderRefused, match="failed its HMAC check"):
        channel(1, 2, store).receive()


def test_several_processes_without_the_specs_secret_are_refused_at_start():
    with pytest.raises(ValueError, match="orders_secret"):
        OrderChannel(Topology(rank=1, world_size=2), None, DictStore())
