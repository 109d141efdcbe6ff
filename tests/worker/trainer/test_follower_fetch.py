"""A follower on a further machine of a trainer over several, where the checkpoint the leader loaded
is not on its disk: it fetches the run's own checkpoint to resume from (or the one it starts from),
and of several followers on one machine one downloads while the others wait and take its folder.
The download itself is stubbed: tests/worker/trainer/checkpoints test it against a control plane."""
import threading
import time
from pathlib import Path
from types import SimpleNamespace

from worker.trainer import follower as follower_module
from worker.trainer.distributed.topology import Topology
from worker.trainer.follower import Follower


def spec(tmp_path, **checkpoints):
    fields = {"resume_from": None, "resume_url": None, "init_from": None, "init_url": None, **checkpoints}
    return SimpleNamespace(config=None, orders_secret="c0" * 32, ingest=SimpleNamespace(token="run-token"),
                           output_dir=str(tmp_path), **fields)


def test_followers_on_one_machine_download_a_missing_checkpoint_once(tmp_path, monkeypatch):
    downloads, busy = [], threading.Lock()

    def local_checkpoint(path, url, token, output_dir, folder):
        target = Path(output_dir) / folder / Path(path).name
        if target.is_dir():
            return str(target), False
        assert busy.acquire(blocking=False), "two downloads at once into one folder"
        time.sleep(0.3)
        target.mkdir(parents=True)
        downloads.append((path, url, token, folder))
        busy.release()
        return str(target), True

    monkeypatch.setattr(follower_module, "local_checkpoint", local_checkpoint)
    launch = spec(tmp_path, resume_from="/cp/runs/7/checkpoints/step-0000002", resume_url="http://cp/ckpt/2")
    found = []
    followers = [Follower(launch, Topology(rank=rank, world_size=3, machine=1, machines=2), channel=object())
                 for rank in (1, 2)]
    threads = [threading.Thread(target=lambda f=f: found.append(f._fetched_here())) for f in followers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert downloads == [("/cp/runs/7/checkpoints/step-0000002", "http://cp/ckpt/2", "run-token", "checkpoints")]
    assert found == [str(tmp_path / "checkpoints" / "step-0000002")] * 2


def test_a_run_that_starts_from_another_runs_checkpoint_fetches_that_one_beside_its_own(tmp_path, monkeypatch):
    asked = []
    monkeypatch.setattr(follower_module, "local_checkpoint",
                        lambda path, url, token, output_dir, folder: asked.append((path, url, folder)) or (path, True))
    launch = spec(tmp_path, init_from="/cp/runs/3/checkpoints/step-0000009", init_url="http://cp/ckpt/9")
    Follower(launch, Topology(rank=1, world_size=2, machine=1, machines=2), channel=object())._fetched_here()
    assert asked == [("/cp/runs/3/checkpoints/step-0000009", "http://cp/ckpt/9", "start-from")]
