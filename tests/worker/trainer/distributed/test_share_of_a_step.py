import pytest

from worker.trainer.distributed.topology import Topology
from worker.trainer.training.step import share_of


def test_each_process_takes_every_nth_micro_batch():
    batches = list(range(8))
    assert share_of(batches, Topology(rank=0, world_size=2)) == [0, 2, 4, 6]
    assert share_of(batches, Topology(rank=1, world_size=2)) == [1, 3, 5, 7]


def test_micro_batches_that_do_not_split_evenly_are_refused():
    with pytest.raises(ValueError, match="gradient_accumulation_steps must be a multiple"):
        share_of(list(range(6)), Topology(rank=0, world_size=4))


def test_topology_comes_from_torchruns_variables():
    topology = Topology.from_env({"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1"})
    assert (topology.rank, topology.world_size) == (1, 2)
    assert (topology.leads, topology.several) == (False, True)
    assert Topology.from_env({}).leads
