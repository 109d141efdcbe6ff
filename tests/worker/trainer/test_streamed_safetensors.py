"""The streamed safetensors writer: what the safetensors library (and so vLLM) reads back."""
import pytest

torch = pytest.importorskip("torch")
from safetensors import safe_open  # noqa: E402
from safetensors.torch import load_file  # noqa: E402

from worker.trainer.weight_sync.streamed_safetensors import write_safetensors  # noqa: E402


def test_floats_are_cast_and_other_dtypes_kept(tmp_path):
    tensors = {"w": torch.randn(3, 5), "scalar": torch.tensor(2.5), "steps": torch.arange(4, dtype=torch.int64),
               "flags": torch.tensor([True, False])}
    path = tmp_path / "model.safetensors"
    write_safetensors(path, tensors, torch.bfloat16, metadata={"format": "pt"})
    back = load_file(path)
    assert back["w"].dtype == torch.bfloat16 and torch.equal(back["w"], tensors["w"].to(torch.bfloat16))
    assert back["scalar"].shape == () and back["scalar"].item() == 2.5
    assert torch.equal(back["steps"], tensors["steps"]) and torch.equal(back["flags"], tensors["flags"])
    with safe_open(path, "pt") as opened:
        assert opened.metadata() == {"format": "pt"}


def test_a_non_contiguous_tensor_is_written_in_its_logical_order(tmp_path):
    transposed = torch.arange(6, dtype=torch.float32).reshape(2, 3).t()
    write_safetensors(tmp_path / "m.safetensors", {"t": transposed}, torch.float32)
    assert torch.equal(load_file(tmp_path / "m.safetensors")["t"], transposed)
