"""Attack: a process that joined the trainer's unauthenticated process group answers the checkpoint
relay's exchange with a pickle that runs code, hoping the leader unpickles it (torch's
`all_gather_object` would). The leader reads JSON alone: it refuses the bytes naming the process,
and the code never runs. Two real processes over gloo on loopback."""
import pickle

import pytest

torch = pytest.importorskip("torch")

from tests.support.asgi_server import free_port  # noqa: E402
from worker.trainer.distributed.plain_collectives import PeerDataRefused, all_gather_json, decode, encode  # noqa: E402


class RunsCode:
    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return exec, (f"open({self.marker!r}, 'w').write('ran')",)


def _process(rank: int, port: int, marker: str, outcome: str) -> None:
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    try:
        if rank == 0:  # the leader, as relay_to_leader calls it
            try:
                all_gather_json([], 2)
                result = "accepted"
            except PeerDataRefused as exc:
                result = str(exc)
            with open(outcome, "w") as out:
                out.write(result)
        else:  # the hostile peer speaks the exchange's framing with a pickle inside
            payload = pickle.dumps([RunsCode(marker)])
            lengths = [torch.zeros(1, dtype=torch.int64) for _ in range(2)]
            dist.all_gather(lengths, torch.tensor([len(payload)], dtype=torch.int64))
            longest = max(int(length.item()) for length in lengths)
            mine = torch.zeros(longest, dtype=torch.uint8)
            mine[:len(payload)] = torch.frombuffer(bytearray(payload), dtype=torch.uint8)
            dist.all_gather([torch.empty(longest, dtype=torch.uint8) for _ in range(2)], mine)
    finally:
        dist.destroy_process_group()


def test_a_peer_pickle_in_the_relay_exchange_is_refused_and_never_run(tmp_path):
    import torch.multiprocessing as mp

    marker, outcome = tmp_path / "marker", tmp_path / "outcome"
    mp.start_processes(_process, args=(free_port(), str(marker), str(outcome)), nprocs=2, start_method="spawn")
    assert outcome.read_text().startswith("process 1 sent")
    assert "not JSON; nothing of them was used" in outcome.read_text()
    assert not marker.exists()


def test_the_decoder_reads_json_and_nothing_else(tmp_path):
    marker = tmp_path / "marker"
    hostile = torch.frombuffer(bytearray(pickle.dumps(RunsCode(marker))), dtype=torch.uint8)
    with pytest.raises(PeerDataRefused, match="process 3 sent .* bytes that are not JSON"):
        decode(hostile, sender=3)
    assert not marker.exists()
    assert decode(encode([["optimizer/__1_0.distcp", 5]]), sender=1) == [["optimizer/__1_0.distcp", 5]]
