"""The streamed safetensors writer: what the safetensors library (and so vLLM) reads back, first
written and rewritten in place."""
import pytest

torch = pytest.importorskip("torch")
from safetensors import safe_open  # noqa: E402
from safetensors.torch import load_file  # noqa: E402

from worker.trainer.weights.streamed_safetensors import SafetensorsRewriter  # noqa: E402


def test_floats_are_cast_and_other_dtypes_kept(tmp_path):
    tensors = {"w": torch.randn(3, 5), "scalar": torch.tensor(2.5), "steps": torch.arange(4, dtype=torch.int64),
               "flags": torch.tensor([True, False])}
    path = tmp_path / "model.safetensors"
    SafetensorsRewriter(path, torch.bfloat16, metadata={"format": "pt"}).write(tensors)
    back = load_file(path)
    assert back["w"].dtype == torch.bfloat16 and torch.equal(back["w"], tensors["w"].to(torch.bfloat16))
    assert back["scalar"].shape == () and back["scalar"].item() == 2.5
    assert torch.equal(back["steps"], tensors["steps"]) and torch.equal(back["flags"], tensors["flags"])
    with safe_open(path, "pt") as opened:
        assert opened.metadata() == {"format": "pt"}


def test_a_non_contiguous_tensor_is_written_in_its_logical_order(tmp_path):
    transposed = torch.arange(6, dtype=torch.float32).reshape(2, 3).t()
    SafetensorsRewriter(tmp_path / "m.safetensors", torch.float32).write({"t": transposed})
    assert torch.equal(load_file(tmp_path / "m.safetensors")["t"], transposed)


def test_a_rewrite_replaces_every_value_in_the_same_file(tmp_path):
    path = tmp_path / "model.safetensors"
    first = {"a": torch.randn(4, 3), "b": torch.randn(7), "n": torch.arange(3)}
    writer = SafetensorsRewriter(path, torch.bfloat16)
    writer.write(first)
    inode = path.stat().st_ino
    second = {name: (t + 1 if t.is_floating_point() else t * 2) for name, t in first.items()}
    writer.write(second)
    back = load_file(path)
    assert path.stat().st_ino == inode
    assert torch.equal(back["a"], second["a"].to(torch.bfloat16))
    assert torch.equal(back["b"], second["b"].to(torch.bfloat16))
    assert torch.equal(back["n"], second["n"])


def test_a_rewrite_with_other_shapes_lays_the_file_out_anew(tmp_path):
    path = tmp_path / "model.safetensors"
    writer = SafetensorsRewriter(path, torch.float32)
    writer.write({"a": torch.randn(8, 8), "b": torch.randn(2)})
    smaller = {"a": torch.randn(2, 2)}
    writer.write(smaller)
    back = load_file(path)
    assert list(back) == ["a"] and torch.equal(back["a"], smaller["a"])


def test_a_file_changed_behind_the_writers_back_is_rewritten_whole(tmp_path):
    path = tmp_path / "model.safetensors"
    writer = SafetensorsRewriter(path, torch.float32)
    tensors = {"a": torch.randn(5)}
    writer.write(tensors)
    path.write_bytes(b"")  # truncated by someone else
    writer.write(tensors)
    assert torch.equal(load_file(path)["a"], tensors["a"])
