"""A trainer process other than rank 0: its share of the model, and its part in each collective.

It talks to nobody but the other processes: no vLLM, no control plane. It loads what the
leader's first order names, then does what each order says until told to stop; the leader
reports everything. If the leader dies, torchrun ends this process too.
"""
import fcntl
import logging
import os
from pathlib import Path

from worker.trainer.checkpoints.fetch import local_checkpoint
from worker.trainer.checkpoints.saving import load_trainer_state, partial_dir, write_shared_parts
from worker.trainer.distributed.crew import OrderChannel
from worker.trainer.weights.gathered import gather_in_turn
from worker.trainer.distributed.order_codec import Order, OrderRefused
from worker.trainer.distributed.topology import Topology
from worker.trainer.spec import LaunchSpec
from worker.trainer.training.setup import TrainingParts, build_training_parts
from worker.trainer.training.step import StepContext, batch_advantages, train_step

log = logging.getLogger("worker.trainer.follower")


class Follower:
    def __init__(self, spec: LaunchSpec, topology: Topology, channel: OrderChannel | None = None):
        self.spec, self.config, self.topology = spec, spec.config, topology
        self.channel = channel or OrderChannel(topology, spec.orders_secret)

    def run(self) -> str:
        try:
            parts = self._load(self.channel.receive().payload["resume_from"])  # the first order: setup
            ctx = parts.training_context(self.config)  # the leader's: the same micro-batches
            log.info("rank %d of %d ready (pid %d)", self.topology.rank, self.topology.world_size, os.getpid())
            while True:
                order = self.channel.receive()
                if order.what == "stop":
                    return "succeeded"
                self._obey(order, parts, ctx)
        except OrderRefused as exc:  # this process ends; torchrun ends the others and the run fails
            log.error("rank %d: %s", self.topology.rank, exc)
            raise

    def _load(self, resume_from: str | None) -> TrainingParts:
        if resume_from and not Path(resume_from).is_dir():  # on the leader's disk, not this machine's
            resume_from = self._fetched_here()
        parts = build_training_parts(self.spec.model, self.config, resume_from=resume_from, topology=self.topology)
        if resume_from and self.spec.resume_from:  # not a checkpoint started from (init_from): its weights alone
            load_trainer_state(Path(resume_from), parts.model, parts.optimizer, parts.scheduler)
        return parts

    def _fetched_here(self) -> str:
        """The checkpoint the leader loaded, downloaded onto this machine as the leader did
        (startup/checkpoints.py): a machine of a trainer over several with no shared disk."""
        spec, token = self.spec, self.spec.ingest.token if self.spec.ingest else None
        path = spec.resume_from or spec.init_from
        url = spec.resume_url if spec.resume_from else spec.init_url
        folder = "checkpoints" if spec.resume_from else "start-from"
        if not path:
            raise RuntimeError("the leading process loaded a checkpoint this machine's spec does not name")
        lock = Path(spec.output_dir) / folder / ".fetching"
        lock.parent.mkdir(parents=True, exist_ok=True)
        # This machine's other followers wait while one downloads, then find the folder it unpacked.
        with lock.open("a") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            local, fetched = local_checkpoint(path, url, token, Path(spec.output_dir), folder=folder)
        if fetched:
            log.info("rank %d: checkpoint fetched from the control plane into %s", self.topology.rank, local)
        return local

    def _obey(self, order: Order, parts: TrainingParts, ctx: StepContext) -> None:
        if order.what == "train":
            groups = order.payload["groups"]
            train_step(ctx, groups, batch_advantages(groups, self.config.num_generations, self.config.scale_rewards))
        elif order.what == "gather":
            gather_in_turn(parts.unwrapped_model())
        elif order.what == "save":
            folder = partial_dir(Path(self.spec.output_dir), order.payload["step"])
            write_shared_parts(folder, parts.unwrapped_model(), parts.optimizer, leads=False)
        else:
            raise ValueError(f"unknown order {order.what!r} from the leading trainer process")
