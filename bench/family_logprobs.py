"""Does vLLM serve a tiny model of each supported family on this machine, and how far are its
sampling log-probs from the trainer's? One vLLM server per family (about 30 s each).

    .venv/bin/python -m bench.family_logprobs [--families gemma2,qwen2]
    .venv/bin/python -m bench.family_logprobs --smoke     # llama alone (bench/smoke.py)

With `--smoke --server-url URL` the server at URL, serving bench/smoke.py's tiny Llama, is the
llama row's (no server started).

Prints one row a family: served or why not, tokens compared, max and mean |vLLM - trainer|.
"""
import argparse
import tempfile
from pathlib import Path

from bench.report import markdown_table
from bench.served_agreement import agreement_config, measure
from bench.smoke import add_smoke_options, refuse_server_url_without_smoke, tiny_model, vllm_server
from worker.trainer.inference.server import ServerStartError
from worker.trainer.models.families import supported_families
from worker.trainer.models.tiny import build_tiny_model


def measure_family(model_type: str, folder: Path, server_url: str | None = None) -> tuple[str, str, str, str]:
    """`server_url`: a server already serving bench/smoke.py's tiny Llama, measured instead."""
    model_dir = tiny_model() if server_url else build_tiny_model(folder / model_type, model_type=model_type)
    try:
        with vllm_server(str(model_dir), agreement_config(), folder / f"{model_type}.log", server_url) as server:
            gap = measure(model_dir, server.url, server.served_model_name)
    except ServerStartError as exc:
        return model_type, f"not served: {str(exc).splitlines()[0][:70]}", "", ""
    return model_type, f"served, {gap.tokens} tokens", f"{gap.max_abs_diff:.2e}", f"{gap.mean_abs_diff:.2e}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default=None, help="comma-separated (default every supported family, "
                                                          "smoke llama)")
    add_smoke_options(parser, serves=True)
    args = parser.parse_args(argv)
    refuse_server_url_without_smoke(parser, args)
    families = (args.families or ("llama" if args.smoke else ",".join(supported_families()))).split(",")
    if args.server_url and families != ["llama"]:
        parser.error("--server-url serves the tiny Llama: give it with --families llama (the smoke default)")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for model_type in families:
            rows.append(measure_family(model_type, Path(folder), args.server_url))
            print(" | ".join(rows[-1]), flush=True)
    print()
    print(markdown_table(("family", "vLLM", "max abs diff", "mean abs diff"), rows))


if __name__ == "__main__":
    main()
