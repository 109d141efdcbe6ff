"""The leader of a trainer over several machines leaves a lost peer to the worker to name: what
gloo and torch raise when the other end went away is told apart from the trainer's own errors."""
import pytest
from torch.distributed import DistNetworkError

from worker.trainer.distributed.peer_loss import lost_a_peer

GLOO = ("[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer "
        "[192.0.2.2]:5032. This is typically caused by a remote worker crashing.")  # as a run printed it


@pytest.mark.parametrize("error", [RuntimeError(GLOO), DistNetworkError("the store went away"),
                                   RuntimeError("[pair.cc:589] Connection reset by peer")])
def test_a_connection_the_other_end_closed_is_a_lost_peer(error):
    assert lost_a_peer(error)


@pytest.mark.parametrize("error", [RuntimeError("CUDA out of memory"), ValueError("bad reward"), KeyError("x")])
def test_the_trainers_own_errors_are_not(error):
    assert not lost_a_peer(error)
