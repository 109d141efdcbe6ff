"""The leader's orders to the other processes, through the rendezvous store torchrun keeps.

The followers wait for an order on the store, not in a collective: the leader may wait
minutes for rollouts between two steps, longer than a collective should be left hanging.
An order names the collective the leader is about to enter (a training step, an FSDP2
weight gather, a checkpoint), so that every process enters it together, in the same order.
Orders travel as JSON signed with the run's secret (order_codec.py): a process that reaches the
store's port can neither run code in the followers nor give them orders of its own.
"""
import os
from dataclasses import replace
from datetime import timedelta

from worker.trainer.distributed.order_codec import MIN_SECRET_CHARS, Order, decode_order, encode_order
from worker.trainer.distributed.topology import Topology

# How long one wait for an order lasts before it is begun again: the store prints a warning at
# each timeout, so long enough that a leader waiting for rollouts adds no lines to the run's log.
ORDER_POLL = timedelta(minutes=10)

__all__ = ["Crew", "Order", "OrderChannel", "lean_group"]


def lean_group(group):
    """What a follower needs of a group to train it: tokens, log-probs, masks and rewards; not its
    text, columns or an environment's state (which has no JSON form)."""
    completions = [replace(c, text="", episode=None) for c in group.completions]
    return replace(group, prompt_text="", columns={}, completions=completions, rewards={})


class OrderChannel:
    """Numbered orders under one key each, signed with `secret`; the last follower to read one
    deletes it."""

    def __init__(self, topology: Topology, secret: str | None, store=None):
        if not secret or len(secret) < MIN_SECRET_CHARS:
            raise ValueError(f"several trainer processes need the launch spec's orders_secret (at least "
                             f"{MIN_SECRET_CHARS} characters), which the worker's supervisor writes; this spec "
                             f"has {'none' if not secret else 'a shorter one'}")
        self.topology, self.secret = topology, secret
        self.store = store if store is not None else _rendezvous_store()
        self.sent = self.read = 0

    def send(self, order: Order) -> None:
        self.sent += 1
        self.store.set(f"order/{self.sent}", encode_order(order, self.sent, self.secret))

    def receive(self) -> Order:
        from torch.distributed import DistStoreError

        self.read += 1
        key = f"order/{self.read}"
        while True:
            try:
                self.store.wait([key], ORDER_POLL)
                break
            except DistStoreError:  # the store's timeout: the leader is still busy (torchrun ends us if it died)
                continue  # a DistNetworkError (the store went with torchrun) ends this process
        order = decode_order(self.store.get(key), self.read, self.secret)  # OrderRefused: the run fails
        if self.store.add(f"read/{self.read}", 1) == self.topology.world_size - 1:
            self.store.delete_key(key)
            self.store.delete_key(f"read/{self.read}")
        return order


def _rendezvous_store():
    """A client of the store torchrun's agent serves at MASTER_ADDR:MASTER_PORT, under a prefix
    of our own."""
    import torch.distributed as dist

    client = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), is_master=False,
                           timeout=timedelta(minutes=5))
    return dist.PrefixStore("grpo-trainer/", client)


class Crew:
    """The leader's side. One process: every order is a no-op."""

    def __init__(self, topology: Topology, channel: OrderChannel | None = None, secret: str | None = None):
        self.topology = topology
        self.channel = channel if channel is not None or not topology.several else OrderChannel(topology, secret)
        self.strategy = "none"
        self.listening = False  # the followers wait for orders (not yet: setup; no more: stop)

    def setup(self, resume_from: str | None) -> None:
        """The first order: the checkpoint every process loads (the leader fetched it)."""
        self._send(Order("setup", {"resume_from": resume_from}))
        self.listening = self.topology.several

    def train(self, groups) -> None:
        self._send(Order("train", {"groups": [lean_group(g) for g in groups]}))

    def gather_weights(self) -> None:
        """Before a weight push: sharded parameters are gathered by every process together."""
        if self.strategy == "fsdp2":
            self._send(Order("gather"))

    def save(self, step: int) -> None:
        self._send(Order("save", {"step": step}))

    def dismiss(self) -> None:
        if self.listening:
            self._send(Order("stop"))
            self.listening = False

    def _send(self, order: Order) -> None:
        if self.channel is not None:
            self.channel.send(order)
