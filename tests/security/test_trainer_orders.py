"""Attack: a process that reaches the trainer processes' store writes the next order itself: a
pickle that runs a command when loaded (what the followers did with every order), or a
well-formed order of its own. Through a real TCPStore, the follower refuses both, runs nothing,
and its process fails saying why (torchrun then ends the run's other processes)."""
import json
import logging
from datetime import timedelta
from types import SimpleNamespace

import pytest

torch_distributed = pytest.importorskip("torch.distributed")

from worker.trainer.distributed.crew import Crew, OrderChannel  # noqa: E402
from worker.trainer.follower import Follower  # noqa: E402
from worker.trainer.distributed.order_codec import OrderRefused  # noqa: E402
from worker.trainer.distributed.topology import Topology  # noqa: E402

SECRET = "c0" * 32
LEADER, FOLLOWER = Topology(rank=0, world_size=2), Topology(rank=1, world_size=2)


class Payload:
    """Unpickled, it would create `path`: proof that bytes from the store ran as code."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (str(self.path), "w"))


@pytest.fixture
def store():
    server = torch_distributed.TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False,
                                        timeout=timedelta(seconds=10))
    yield torch_distributed.PrefixStore("grpo-trainer/", server)


def intruder(store) -> torch_distributed.Store:
    """Another client of the same store, as any process reaching its port is."""
    client = torch_distributed.TCPStore("127.0.0.1", store.underlying_store.port, is_master=False,
                                        timeout=timedelta(seconds=10))
    return torch_distributed.PrefixStore("grpo-trainer/", client)


def test_a_pickle_written_into_the_store_is_refused_unloaded(store, tmp_path, caplog):
    import pickle

    intruder(store).set("order/1", pickle.dumps(Payload(tmp_path / "pwned")))
    spec = SimpleNamespace(config=None, orders_secret=SECRET)
    follower = Follower(spec, FOLLOWER, OrderChannel(FOLLOWER, SECRET, store))
    with caplog.at_level(logging.ERROR), pytest.raises(OrderRefused, match="failed its HMAC check"):
        follower.run()
    assert not (tmp_path / "pwned").exists()
    assert "rank 1: order 1 in the trainer processes' store failed its HMAC check" in caplog.text


def test_an_order_of_the_intruders_own_is_refused_after_the_leaders(store):
    Crew(LEADER, OrderChannel(LEADER, SECRET, store)).setup(None)
    forged = json.dumps({"what": "save", "payload": {"step": 1}}).encode()
    intruder(store).set("order/2", b"0" * 64 + b"\n" + forged)
    follower = OrderChannel(FOLLOWER, SECRET, store)
    assert follower.receive().what == "setup"  # the leader's, signed
    with pytest.raises(OrderRefused, match="order 2 .* failed its HMAC check"):
        follower.receive()
