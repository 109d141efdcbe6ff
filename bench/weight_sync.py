"""Weight sync alone: the direct reload (worker/trainer/inference/direct_reload.py) against
vLLM's own reload, into one real vLLM server; and the push a server on a machine of vLLM's own
takes (inference_machines: the file sent over HTTP, then the direct reload of the server's copy).

    .venv/bin/python -m bench.weight_sync               # SmolLM2-135M prepared under var/models, 12 syncs each
    .venv/bin/python -m bench.weight_sync --syncs 20 --model /path/to/model
    .venv/bin/python -m bench.weight_sync --smoke       # a tiny model, 1 push each way (bench/smoke.py)

The trainer's whole push (`FilesystemWeightSync.push`: write the safetensors file, pause,
reload, reset the prefix cache, resume; `HttpWeightPush.push` sends the file before the pause)
in the served dtype of this machine (worker/trainer/training/precision.py), the model moved a
little before every push so each one carries new weights. The ways take turns push by push and
share the server, so a busy moment of the machine lands on all. Over HTTP the bytes cross this
machine's loopback: a real network adds the file's size over its bandwidth. After each pair the server's prompt log-probabilities
under both are compared (they should agree to rounding). The server is idle between pushes:
in a run it is paused for the training step and its in-flight requests wait frozen.

Nothing is asserted: the script prints one table.
"""
import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from bench.report import markdown_table
from bench.smoke import add_smoke_options, refuse_server_url_without_smoke, tiny_model, vllm_server

TEXT = ("Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
        "How many clips did Natalia sell altogether in April and May?")


def served_logprobs(server, ids: list[int]) -> list[float]:
    import httpx

    response = httpx.post(f"{server.url}/v1/completions", timeout=120, headers=server.headers, json={
        "model": server.served_model_name, "prompt": ids, "max_tokens": 1, "prompt_logprobs": 0})
    response.raise_for_status()
    entries = response.json()["choices"][0]["prompt_logprobs"][1:]
    return [entry[str(token)]["logprob"] for token, entry in zip(ids[1:], entries)]


def nudge(model, seed: int) -> None:
    """A training step's worth of change, everywhere (every linear layer must be repacked)."""
    import torch

    with torch.no_grad():
        generator = torch.Generator().manual_seed(seed)
        for parameter in model.parameters():
            parameter.add_(torch.randn(parameter.shape, generator=generator) * 1e-3)


def timed_push(sync, model, version: int) -> dict:
    total = sync.push(model, version)  # as the trainer times it
    reload = sync.last_reload["seconds"]  # as the server timed it
    return {"push": total, "reload": reload, "rest": total - reload, "way": sync.last_reload["reload"],
            "upload": sync.last_push_parts().get("upload", 0.0)}


def summary(name: str, rows: list[dict]) -> tuple:
    def mean_max(key):
        values = [row[key] for row in rows]
        return f"{statistics.mean(values):.3f} / {max(values):.3f}"
    ways = ", ".join(sorted({row["way"] for row in rows}))
    return name, ways, len(rows), mean_max("push"), mean_max("reload"), mean_max("rest"), mean_max("upload")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--syncs", type=int, default=None, help="pushes by each way (default 12, smoke 1)")
    parser.add_argument("--model", default="HuggingFaceTB/SmolLM2-135M-Instruct")
    add_smoke_options(parser, serves=True)
    args = parser.parse_args(argv)
    refuse_server_url_without_smoke(parser, args)
    args.syncs = args.syncs or (1 if args.smoke else 12)

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from worker.trainer.config import PRESETS, TrainingConfig
    from worker.trainer.models.paths import resolve_model_path
    from worker.trainer.training.precision import local_serving_device, served_dtype
    from worker.trainer.inference.launch import new_api_key
    from worker.trainer.weight_sync.filesystem import FilesystemWeightSync
    from worker.trainer.weight_sync.http_push import HttpWeightPush

    model_dir = tiny_model() if args.smoke else resolve_model_path(args.model)
    dtype = served_dtype(local_serving_device())
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)  # the trainer's master weights
    ids = AutoTokenizer.from_pretrained(model_dir)(TEXT, add_special_tokens=False).input_ids
    config = TrainingConfig(**PRESETS["cpu-demo"])
    # A server of our own takes uploads, as one on a machine of vLLM's own does; one given by
    # --server-url may not, so the HTTP way is left out there.
    key = None if args.server_url else new_api_key()
    differences = []
    with tempfile.TemporaryDirectory() as work, \
            vllm_server(model_dir, config, Path(work) / "vllm.log", args.server_url, dtype=dtype, api_key=key,
                        **({} if args.server_url else {"upload_folder": str(Path(work) / "uploads")})) as server:
        syncs = {"direct": FilesystemWeightSync(server.url, Path(work), dtype=dtype, api_key=key),
                 "vllm": FilesystemWeightSync(server.url, Path(work), dtype=dtype, direct_reload=False, api_key=key)}
        if key:
            syncs["http"] = HttpWeightPush([server.url], Path(work), dtype=dtype, api_key=key)
        results: dict[str, list[dict]] = {name: [] for name in syncs}
        try:
            for sync in syncs.values():  # not counted: the first of each allocates and warms up
                timed_push(sync, model, 0)
            for index in range(args.syncs):
                nudge(model, seed=index)
                order = list(syncs)[index % len(syncs):] + list(syncs)[:index % len(syncs)]
                served = {}
                for name in order:
                    results[name].append(timed_push(syncs[name], model, index + 1))
                    served[name] = served_logprobs(server, ids)
                differences.append(max(abs(a - b) for name in served for a, b in zip(served["direct"], served[name])))
                print(f"sync {index + 1}/{args.syncs}: " + ", ".join(
                    f"{name} {results[name][-1]['push']:.3f} s" for name in syncs), file=sys.stderr)
        finally:
            for sync in syncs.values():
                sync.close()

    print(f"\nweight sync of {Path(model_dir).name} in {dtype}, {args.syncs} pushes each, alternated\n")
    header = ("reload", "server took", "pushes", "push s mean / max", "reload in the server s mean / max",
              "the rest (write, upload, pause, reset, resume) s mean / max", "of which the upload s mean / max")
    names = {"direct": "direct (ours)", "vllm": "vLLM's reload_weights + head retied",
             "http": "sent over HTTP, then direct (inference_machines)"}
    print(markdown_table(header, [summary(names[name], rows) for name, rows in results.items()]))
    direct = statistics.mean(r["push"] for r in results["direct"])
    for name in ("vllm", "http"):
        if results.get(name):
            print(f"\n{names[name]}: its push takes {statistics.mean(r['push'] for r in results[name]) / direct:.2f}x "
                  "the direct one's")
    print(f"served prompt log-probs differ by at most {max(differences):.2e} between the ways")


if __name__ == "__main__":
    main()
