"""The trainer's step in one process, in two with DDP and in two with FSDP2, on the same model
and batch: what each process holds (parameters, gradients, optimizer state), seconds a step,
the share of it inside collectives, and the weight push's gather and write.

    .venv/bin/python -m bench.distributed [--model HuggingFaceTB/SmolLM2-135M-Instruct] [--steps 3]
    .venv/bin/python -m bench.distributed --gpu-only      (on a GPU machine: the one-process GPU row)
    .venv/bin/python -m bench.distributed --smoke         (the one-process row: a tiny model, 1 step timed)

Each configuration is `python -m worker.trainer.training.probe` (under torchrun for two
processes): the trainer's own train_step on seeded groups, in fp32 unless --bf16 on. Bytes are
counted from the tensors each process holds, not its RSS (printed beside them). On a 2-core CPU
two processes do not step faster: the table says what they cost. Nothing is asserted.
"""
import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.report import markdown_table
from bench.smoke import add_smoke_options, tiny_model

CONFIGURATIONS = (("none", 1), ("ddp", 2), ("fsdp2", 2))
MIB = 2**20
# --smoke: the probe's smallest step (1 timed after the compared one), on bench/smoke.py's tiny model, in
# one process: torchrun's two take about a minute more each on two cores, and the probe's own tests
# run them (tests/worker/trainer/distributed/test_same_step_at_any_scale.py).
SMOKE_SIZES = {"steps": 1, "prompt_tokens": 16, "completion_tokens": 16, "micro_batch": 2, "accumulation": 2}


def probe_args(model: str, strategy: str, args, out: Path) -> list[str]:
    """The probe's command after the interpreter (or its launcher)."""
    return ["-m", "worker.trainer.training.probe", "--model", model, "--out", str(out),
            "--distributed", strategy, "--steps", str(args.steps), "--bf16", args.bf16,
            "--prompt-tokens", str(args.prompt_tokens), "--completion-tokens", str(args.completion_tokens),
            "--micro-batch", str(args.micro_batch), "--accumulation", str(args.accumulation)]


def probe(model: str, strategy: str, processes: int, args, out: Path) -> dict:
    import torch

    launcher = [] if processes == 1 else ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node",
                                          str(processes)]
    subprocess.run([sys.executable, *launcher, *probe_args(model, strategy, args, out)], check=True,
                   stdout=subprocess.DEVNULL)
    return torch.load(out)


def add_probe_options(parser: argparse.ArgumentParser) -> None:
    """The probe's model and step sizes (this script's and bench/multi_node.py's)."""
    parser.add_argument("--model", default="HuggingFaceTB/SmolLM2-135M-Instruct")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--bf16", default="off", choices=("auto", "on", "off"))
    parser.add_argument("--prompt-tokens", type=int, default=128)
    parser.add_argument("--completion-tokens", type=int, default=128)
    parser.add_argument("--micro-batch", type=int, default=2)
    parser.add_argument("--accumulation", type=int, default=4)


def probe_model(args) -> str:
    """The model's folder, after --smoke has put its tiny model and sizes into `args`."""
    from worker.trainer.models.paths import resolve_model_path

    if args.smoke:
        vars(args).update(SMOKE_SIZES, model=tiny_model())
    return resolve_model_path(args.model)


def row(result: dict, ddp: dict | None) -> tuple:
    held = result["parameter_bytes"] + result["gradient_bytes"] + result["optimizer_bytes"]
    ratio = "—"
    if ddp is not None and result["strategy"] == "fsdp2":
        ratio = f"{held / (ddp['parameter_bytes'] + ddp['gradient_bytes'] + ddp['optimizer_bytes']):.2f}x"
    memory = f"{result['peak_cuda_gib']:.2f} (CUDA)" if "peak_cuda_gib" in result else f"{result['peak_rss_gib']:.2f}"
    return (result["device"], result["processes"], result["strategy"], f"{result['parameter_bytes'] / MIB:.0f}",
            f"{result['gradient_bytes'] / MIB:.0f}", f"{result['optimizer_bytes'] / MIB:.0f}", f"{held / MIB:.0f}",
            ratio, f"{result['step_s']:.3f}", f"{result['communication_share']:.0%}",
            f"{result['weight_push_s']:.3f}", memory, f"{result['loss']:.6g}", f"{result['grad_norm']:.6g}")


HEADER = ("device", "processes", "distributed", "params MiB/proc", "grads MiB/proc", "optimizer MiB/proc",
          "held MiB/proc", "vs DDP", "s a step", "in collectives", "weight push s", "peak GiB/proc",
          "loss", "grad norm")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpu-only", action="store_true", help="only the one-process row (a GPU machine)")
    add_probe_options(parser)
    add_smoke_options(parser)
    args = parser.parse_args(argv)
    model = probe_model(args)
    configurations = CONFIGURATIONS[:1] if args.gpu_only or args.smoke else CONFIGURATIONS
    rows, ddp = [], None
    with tempfile.TemporaryDirectory() as work:
        for strategy, processes in configurations:
            result = probe(model, strategy, processes, args, Path(work) / f"{strategy}.pt")
            ddp = result if strategy == "ddp" else ddp
            rows.append(row(result, ddp))
    print(f"model {args.model}; {args.micro_batch * args.accumulation} completions a step (prompts up to "
          f"{args.prompt_tokens} tokens, completions up to {args.completion_tokens}); median of {args.steps} "
          f"steps after the first; bf16 {args.bf16}")
    print(markdown_table(HEADER, rows))


if __name__ == "__main__":
    main()
