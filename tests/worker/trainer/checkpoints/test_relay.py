"""Attack: a process that joined the trainer's unauthenticated process group offers, for the
checkpoint the leader uploads, a file of its choosing. The leader takes only what DCP itself
writes for that process, inside the checkpoint's folder; anything else fails the save unwritten.
(The relay itself, over two real torchruns: tests/worker/trainer/distributed/test_trainer_over_machines.py.)"""
from types import SimpleNamespace

import pytest

from worker.trainer.checkpoints.relay import refuse_unlawful, refuse_unoffered


def test_a_process_may_offer_its_own_shard_files():
    refuse_unlawful([[], [("optimizer/__1_0.distcp", 5), ("optimizer/__1_1.distcp", 0)]])


@pytest.mark.parametrize("offered", [
    ("../../../home/user/.bashrc/__1_0.distcp", 1),  # out of the folder
    ("/etc/cron.d/__1_0.distcp", 1),                 # absolute
    ("optimizer/__0_0.distcp", 1),                   # the leader's own file
    ("optimizer/model.safetensors", 1),              # not a shard file
    ("optimizer/__1_0.distcp", -1),                  # a size that is none
])
def test_anything_else_is_refused_naming_the_process(offered):
    with pytest.raises(ValueError, match=r"process 1 offered .* not a shard file of its own; nothing was written"):
        refuse_unlawful([[], [offered]])


def test_an_entry_that_is_not_a_file_and_size_is_refused():
    with pytest.raises(ValueError, match=r"process 1 offered .* not a \(file, size\) pair; nothing was written"):
        refuse_unlawful([[], [{"name": "optimizer/__1_0.distcp"}]])


def test_a_process_sends_only_files_it_offered():
    """The leader's answer crosses the same unauthenticated group: a forged one naming any other file
    of the sender's machine gets nothing sent."""
    topology = SimpleNamespace(rank=1, world_size=2)
    offered = [["optimizer/__1_0.distcp", 5]]
    refuse_unoffered([[], ["optimizer/__1_0.distcp"]], offered, topology)
    for forged in ([[], ["/home/worker/.ray/auth_token"]], [[], [["not", "a name"]]], [[]], "everything"):
        with pytest.raises(ValueError, match="process 1 was asked for files it did not offer"):
            refuse_unoffered(forged, offered, topology)
