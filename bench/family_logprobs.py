"""Does vLLM serve a tiny model of each supported family on this machine, and how far are its
sampling log-probs from the trainer's? One vLLM server per family (about 30 s each).

    .venv/bin/python -m bench.family_logprobs [--families gemma2,qwen2]

Prints one row a family: served or why not, tokens compared, max and mean |vLLM - trainer|.
"""
import argparse
import tempfile
from pathlib import Path

from bench.report import markdown_table
from worker.trainer.inference.server import ServerStartError, VLLMServer
from worker.trainer.models.families import supported_families
from bench.served_agreement import agreement_config, measure
from worker.trainer.models.tiny import build_tiny_model


def measure_family(model_type: str, folder: Path) -> tuple[str, str, str, str]:
    model_dir = build_tiny_model(folder / model_type, model_type=model_type)
    try:
        with VLLMServer.for_config(str(model_dir), agreement_config(), log_path=folder / f"{model_type}.log") as server:
            server.wait_until_healthy()
            gap = measure(model_dir, server.url, server.served_model_name)
    except ServerStartError as exc:
        return model_type, f"not served: {str(exc).splitlines()[0][:70]}", "", ""
    return model_type, f"served, {gap.tokens} tokens", f"{gap.max_abs_diff:.2e}", f"{gap.mean_abs_diff:.2e}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default=",".join(supported_families()))
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for model_type in args.families.split(","):
            rows.append(measure_family(model_type, Path(folder)))
            print(" | ".join(rows[-1]), flush=True)
    print()
    print(markdown_table(("family", "vLLM", "max abs diff", "mean abs diff"), rows))


if __name__ == "__main__":
    main()
