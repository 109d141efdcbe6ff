"""Attack: a process that joined the trainer's unauthenticated process group offers, for the
checkpoint the leader uploads, a file of its choosing. The leader takes only what DCP itself
writes for that process, inside the checkpoint's folder; anything else fails the save unwritten.
(The relay itself, over two real torchruns: tests/worker/trainer/distributed/test_trainer_over_machines.py.)"""
import pytest

from worker.trainer.checkpoints.relay import refuse_unlawful


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
