"""What moving a run's bytes through the control plane costs on this machine: a worker fetching an
uploaded dataset, a worker uploading a checkpoint, a training step while an upload runs, and a
synthetic checkpoint of real size (issue #33) uploaded, downloaded and resumed.

    .venv/bin/python -m bench.artifacts [--dataset-mb 200] [--steps 4] [--checkpoint-gb 10]
    .venv/bin/python -m bench.artifacts --skip-training --checkpoint-gb 2     # no trainer stack needed
    .venv/bin/python -m bench.artifacts --smoke      # 1 MB, a tiny model's checkpoint, 1 step, 20 MB (bench/smoke.py)

A real control plane as `make run` starts it (uvicorn and a consumer of the `controlplane` queue,
a DATA_DIR and SQLite of their own, bench/load_server.py) on this machine; each peer is a plain
local copy of the same bytes, timed in the same run. The checkpoint is SmolLM2-135M's after one
cpu-demo training step (model, optimizer state, tokenizer). The step rows train the cpu-demo
`train_step` on bench/train_step.py's synthetic groups, alone and while checkpoints upload one
after another. The synthetic checkpoint's large files are sparse (bench/load_transfers.py); it is
uploaded through the worker's uploader, then downloaded as a user does (its tar), once whole and
once cut off half-way and resumed with Range, while the server's RSS is sampled. Nothing is
asserted: the script prints one table.
"""
import argparse
import hashlib
import json
import random
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

from bench.load_server import LoadServer, MemoryWatch
from bench.load_transfers import download, local_copy_s, make_checkpoint, manifest_of
from bench.report import markdown_table
from bench.smoke import add_smoke_options, smoke_settings
from tests.support.asgi_server import logged_in_client

MB, GB = 2 ** 20, 2 ** 30

SEED = """
import json
from django.contrib.auth import get_user_model
from runs.models import Dataset, RewardFunction, Run, RunReward
from worker.trainer.config import TrainingConfig
owner = get_user_model().objects.create_user("owner", password="owner-pass-123")
dataset = Dataset.objects.create(owner=owner, name="big", source="upload", file_format="jsonl", sha256=SHA256,
                                 size_bytes=SIZE, row_count=1)
dataset.file.name = NAME
dataset.save()
reward = RewardFunction.objects.create(owner=owner, name="acc", kind="builtin", builtin="accuracy")
run = Run.objects.create(owner=owner, name="bench", dataset=dataset, config=TrainingConfig().model_dump())
RunReward.objects.create(run=run, reward_function=reward)
token = run.issue_ingest_token()
run.save()
print(json.dumps({"run_id": run.pk, "token": token}))
"""


def write_dataset(path: Path, megabytes: int) -> str:
    """A JSONL file of arithmetic prompts of about `megabytes`; returns its sha256."""
    digest, rng, target = hashlib.sha256(), random.Random(0), megabytes * 2 ** 20
    with path.open("wb") as out:
        while out.tell() < target:
            lines = "".join(json.dumps({"prompt": f"What is {rng.randint(0, 10**6)} + {rng.randint(0, 10**6)}?",
                                        "answer": f"#### {rng.randint(0, 10**6)}"}) + "\n" for _ in range(10_000))
            data = lines.encode()
            digest.update(data)
            out.write(data)
    return digest.hexdigest()


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def dataset_rows(server, seeded, source: Path, sha256: str, work: Path) -> list[tuple]:
    from worker.trainer.data.fetch import dataset_file
    from worker.trainer.spec import DatasetSpec

    spec = DatasetSpec(kind="file", format="jsonl", url=f"{server.url}/api/runs/{seeded['run_id']}/dataset/",
                       sha256=sha256)
    megabytes = source.stat().st_size / 2 ** 20
    fetch_s = timed(lambda: dataset_file(spec, seeded["token"], cache_dir=work / "cache"))
    copy_s = timed(lambda: shutil.copyfile(source, work / "copy.jsonl"))
    return [(f"dataset fetch, {megabytes:.0f} MB JSONL", f"{megabytes / fetch_s:.0f} MB/s",
             f"local copy {megabytes / copy_s:.0f} MB/s", f"{copy_s / fetch_s:.2f}x", "≥ 0.5x",
             met(copy_s / fetch_s >= 0.5))]


def met(ok: bool) -> str:
    return "met" if ok else "**missed**"


def trained_checkpoint(work: Path, smoke: bool = False):
    """SmolLM2-135M after one cpu-demo step (a smoke run: the tiny model after a tiny step), saved with
    its optimizer state; the step context too."""
    from bench.train_step import DEMO_SHAPE, SMOKE_BATCHES, SMOKE_SHAPE, synthetic_step
    from worker.trainer.training import setup
    from worker.trainer.checkpoints.saving import TrainerState, save_checkpoint
    from worker.trainer.config import PRESETS, TrainingConfig
    from worker.trainer.models.prepare import prepare_default_model
    from worker.trainer.training.step import batch_advantages, train_step

    if smoke:
        config, shape = TrainingConfig(**smoke_settings(PRESETS["cpu-demo"], **SMOKE_BATCHES)), SMOKE_SHAPE
    else:
        config, shape = TrainingConfig(**{**PRESETS["cpu-demo"], "model": "default"}), DEMO_SHAPE
    parts = setup.build_training_parts(config.model if smoke else str(prepare_default_model().path), config)
    ctx = parts.step_context(config)
    rng = random.Random(0)

    def step(index: int) -> float:
        groups = synthetic_step(rng, index, shape)
        return timed(lambda: train_step(ctx, groups, batch_advantages(groups, config.num_generations,
                                                                      config.scale_rewards)))

    step(0)
    folder = save_checkpoint(work / "out", TrainerState(step=1, model_version=1, data_position=0),
                             parts.unwrapped_model(), parts.tokenizer, parts.optimizer, parts.scheduler)
    return folder, step


def upload_once(url: str, token: str, folder: Path, step: int) -> float:
    from worker.trainer.checkpoints.uploader import CheckpointUploader

    uploader = CheckpointUploader(url, token, on_uploaded=lambda job: None, say=lambda level, message: None)
    started = time.perf_counter()
    uploader.submit(folder, step, step)
    if not uploader.close(timeout_s=1800):
        raise RuntimeError("the upload did not finish")
    return time.perf_counter() - started


def checkpoint_rows(url: str, token: str, folder: Path, work: Path) -> list[tuple]:
    megabytes = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2 ** 20
    upload_s = upload_once(url, token, folder, 1)
    copy_s = timed(lambda: shutil.copytree(folder, work / "copied-checkpoint"))
    return [(f"checkpoint upload, {megabytes:.0f} MB", f"{upload_s:.1f} s", f"local copy {copy_s:.1f} s",
             f"{upload_s / copy_s:.2f}x", "≤ 2x", met(upload_s / copy_s <= 2))]


def step_rows(url: str, token: str, folder: Path, step, steps: int) -> list[tuple]:
    alone = [step(i) for i in range(1, steps + 1)]
    busy, uploads = threading.Event(), []

    def keep_uploading():  # the same step again and again: the store keeps one copy
        while busy.is_set():
            uploads.append(upload_once(url, token, folder, 100))

    busy.set()
    thread = threading.Thread(target=keep_uploading, daemon=True)
    thread.start()
    during = [step(i) for i in range(steps + 1, 2 * steps + 1)]
    busy.clear()
    thread.join()
    alone_s, during_s = statistics.median(alone), statistics.median(during)
    return [("training step, median", f"{during_s:.2f} s while uploading ({len(uploads)} uploads)",
             f"{alone_s:.2f} s alone", f"{during_s / alone_s - 1:+.1%}", "≤ +10%", met(during_s / alone_s <= 1.1))]


STORED = """
import json
from runs.artifacts.stores import artifact_store
from runs.models import Checkpoint
checkpoint = Checkpoint.objects.filter(run_id=RUN, step=STEP, in_store=True).first()
print(json.dumps(checkpoint and {"id": checkpoint.pk, "files": checkpoint.files,
                                 "folder": str(artifact_store().folder(RUN, STEP))}))
"""


def synthetic_rows(server, seeded, gigabytes: float, work: Path) -> list[tuple]:
    """A checkpoint of `gigabytes` through the uploader, then downloaded whole and resumed, alone."""
    size, step = int(gigabytes * GB), 1000
    folder = make_checkpoint(work / "synthetic", size)
    manifest = sorted((f["path"], f["size"], f["sha256"]) for f in manifest_of(folder))
    upload_s = upload_once(f"{server.url}/api/runs/{seeded['run_id']}/uploads/", seeded["token"], folder, step)
    upload_copy_s = local_copy_s(folder, work / "synthetic-copy")
    stored = server.shell_json(f"RUN = {seeded['run_id']}\nSTEP = {step}\n" + STORED)
    checked = stored is not None and sorted((f["path"], f["size"], f["sha256"]) for f in stored["files"]) == manifest
    rows = [(f"synthetic checkpoint upload, {gigabytes:g} GB", f"{upload_s:.1f} s, "
             f"{'listed as its manifest says' if checked else 'not listed as its manifest says'}",
             f"local copy {upload_copy_s:.1f} s", f"{upload_s / upload_copy_s:.2f}x", "listed; ≤ 2x",
             met(checked and upload_s / upload_copy_s <= 2))]
    if stored is None:
        return rows
    return rows + download_rows(server, seeded, stored, size, work)


def download_rows(server, seeded, stored: dict, size: int, work: Path) -> list[tuple]:
    client = logged_in_client(server, "owner", "owner-pass-123")
    cookies, path = dict(client.cookies), f"/api/runs/{seeded['run_id']}/checkpoints/{stored['id']}/download/"
    client.close()
    copy_s = local_copy_s(Path(stored["folder"]), work / "stored-copy")
    with MemoryWatch(server) as memory:
        memory.mark("before")
        time.sleep(1)
        memory.mark("load")
        whole = download(server.url, cookies, path, work / "whole.tar", None)
        memory.mark("after")
    before = statistics.median(memory.between("before", "load", 1))
    growth = (max(memory.between("load", "after", 1), default=before) - before) / MB
    resumed = download(server.url, cookies, path, work / "resumed.tar", size // 2)
    same = bool(whole.sha256) and (whole.sha256, whole.bytes) == (resumed.sha256, resumed.bytes)
    rate, copy_rate = whole.bytes / MB / whole.seconds, size / MB / copy_s
    return [
        (f"checkpoint download, {size / GB:g} GB tar", f"{rate:.0f} MB/s" + (f" ({whole.error})" if whole.error else ""),
         f"local copy {copy_rate:.0f} MB/s", f"{rate / copy_rate:.2f}x", "≥ 0.5x",
         met(not whole.error and rate / copy_rate >= 0.5)),
        ("web process RSS growth during that download", f"+{growth:.0f} MB (from {before / MB:.0f} MB)", "—", "—",
         "≤ 256 MB", met(growth <= 256)),
        ("download cut off half-way, resumed with Range", f"{resumed.resumed or resumed.error}: "
         f"{'identical' if same else 'different'}", "the whole download", "—", "byte-identical",
         met(same and resumed.resumed.startswith("206"))),
    ]


# --smoke: the smallest of each part, still through a real control plane.
SMOKE_SIZES = {"dataset_mb": 1, "steps": 1, "checkpoint_gb": 0.02}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset-mb", type=int, default=200)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--checkpoint-gb", type=float, default=10.0,
                        help="the synthetic checkpoint's size (0: leave it out)")
    parser.add_argument("--skip-training", action="store_true",
                        help="leave out SmolLM2's checkpoint and the training step rows (no trainer stack)")
    add_smoke_options(parser)
    args = parser.parse_args(argv)
    if args.smoke:
        vars(args).update(SMOKE_SIZES)
    work = Path(tempfile.mkdtemp(prefix="bench-artifacts-"))
    try:
        (work / "cp" / "uploads" / "datasets").mkdir(parents=True)
        source = work / "cp" / "uploads" / "datasets" / "big.jsonl"
        sha256 = write_dataset(source, args.dataset_mb)
        with LoadServer(work / "cp", env={}, web_processes=1) as server:
            seeded = server.shell_json(f"SHA256 = {sha256!r}\nSIZE = {source.stat().st_size}\n"
                                       f"NAME = 'datasets/big.jsonl'\n" + SEED)
            url = f"{server.url}/api/runs/{seeded['run_id']}/uploads/"
            rows = dataset_rows(server, seeded, source, sha256, work)
            if not args.skip_training:
                folder, step = trained_checkpoint(work, args.smoke)
                rows += checkpoint_rows(url, seeded["token"], folder, work)
                rows += step_rows(url, seeded["token"], folder, step, args.steps)
            if args.checkpoint_gb > 0:
                rows += synthetic_rows(server, seeded, args.checkpoint_gb, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("Moving a run's bytes through a control plane on this machine, against local copies")
    print(markdown_table(("measure", "through the control plane", "peer", "ratio", "target", "met?"), rows))


if __name__ == "__main__":
    main()
