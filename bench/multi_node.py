"""The trainer's step on one machine against the same step over two (trainer_machines): what each
process holds, seconds a step, the share inside collectives, the weight push's gather and write,
and the seconds from launch to the first step done.

    .venv/bin/python -m bench.multi_node [--model HuggingFaceTB/SmolLM2-135M-Instruct] [--steps 3]
    .venv/bin/python -m bench.multi_node --smoke     (the two-machine row only: a tiny model, 1 step timed)

Each row is `python -m worker.trainer.training.probe` (bench/distributed.py): one process; DDP in
two processes under one torchrun (one machine); DDP in two processes under two torchruns that meet
as the worker's machines meet (worker/trainer/distributed/rendezvous.py: the first's store on its
address, each machine its own node rank). Here both "machines" are this one, on two loopback
addresses: the rows show what the second torchrun and its rendezvous cost, not a network's
bandwidth. A Ray placement's own seconds are not in it: `bench.overhead --ray` times a run from
start to first metric with and without Ray. Nothing is asserted.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.distributed import HEADER, add_probe_options, probe, probe_args, probe_model, row
from bench.report import markdown_table
from bench.smoke import add_smoke_options

FIRST, SECOND = "127.0.0.2", "127.0.0.1"  # the two machines' addresses, both on this one


def on_two_machines(model: str, args, out: Path) -> dict:
    """DDP over two torchruns, one process each, as two machines of a Ray pool start theirs."""
    import torch

    from worker.trainer.distributed.rendezvous import Rendezvous, free_port_on

    machines = Rendezvous((FIRST, SECOND), free_port_on(FIRST))
    # Each "machine" a core of this one's two, as one torchrun gives each of its two processes.
    env = {**os.environ, "OMP_NUM_THREADS": "1", "GLOO_SOCKET_IFNAME": machines.interface_of(0)}
    launched = [subprocess.Popen([*machines.torchrun_argv(sys.executable, 1, rank),
                                  *probe_args(model, "ddp", args, out)], stdout=subprocess.DEVNULL, env=env)
                for rank in (0, 1)]
    if any(process.wait() for process in launched):
        raise RuntimeError(f"a machine's torchrun failed: exit codes {[p.returncode for p in launched]}")
    return torch.load(out)


def timed(measure) -> tuple[dict, float]:
    started = time.monotonic()
    result = measure()
    return result, time.monotonic() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_probe_options(parser)
    add_smoke_options(parser)
    args = parser.parse_args(argv)
    model = probe_model(args)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        runs = [] if args.smoke else [
            ("1", lambda: probe(model, "none", 1, args, Path(work) / "one.pt")),
            ("1", lambda: probe(model, "ddp", 2, args, Path(work) / "ddp.pt")),
        ]
        runs.append(("2", lambda: on_two_machines(model, args, Path(work) / "two.pt")))
        for machines, measure in runs:
            result, launch_s = timed(measure)
            rows.append((machines, *row(result, None), f"{launch_s:.1f}"))
    print(f"model {args.model}; {args.micro_batch * args.accumulation} completions a step (prompts up to "
          f"{args.prompt_tokens} tokens, completions up to {args.completion_tokens}); median of {args.steps} "
          f"steps after the first; bf16 {args.bf16}; 'launch to end s': the whole probe, load and "
          f"{args.steps + 1} steps included")
    print(markdown_table(("machines", *HEADER, "launch to end s"), rows))


if __name__ == "__main__":
    main()
