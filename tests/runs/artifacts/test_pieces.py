"""A tar laid out from names and sizes alone: read from any byte it is the same archive, which
tarfile reads back; a file that shrank while sent keeps the announced length."""
import io
import os
import tarfile
from pathlib import Path, PurePosixPath

import pytest

from runs.artifacts.checkpoint_files import CheckpointFile, folder_files
from runs.artifacts.export import tar_member, tar_pieces
from runs.artifacts.pieces import CHUNK, iter_bytes, reads, total_size

LONG = "tokenizer/" + "a-very-long-name-" * 8 + ".json"  # past ustar's 100 characters: a PAX header


@pytest.fixture
def folder(tmp_path) -> Path:
    folder = tmp_path / "step-0000004"
    (folder / "tokenizer").mkdir(parents=True)
    (folder / "config.json").write_text('{"a": 1}')
    (folder / "model.safetensors").write_bytes(os.urandom(2 * CHUNK + 777))
    (folder / LONG).write_bytes(os.urandom(513))
    (folder / "empty").write_bytes(b"")
    return folder


def whole(pieces) -> bytes:
    return b"".join(iter_bytes(pieces, 0, total_size(pieces) - 1))


def test_the_laid_out_tar_is_read_back_by_tarfile_with_its_manifest_first(folder):
    pieces = tar_pieces([(file.path, file) for file in folder_files(folder)], "step-0000004",
                        before=[tar_member("manifest.json", b"{}")])
    data = whole(pieces)
    assert len(data) == total_size(pieces) and len(data) % 512 == 0
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        assert tar.getnames()[0] == "manifest.json"
        for path in ("config.json", "model.safetensors", LONG, "empty"):
            assert tar.extractfile(f"step-0000004/{path}").read() == (folder / path).read_bytes()


@pytest.mark.parametrize("start", [0, 1, 511, 512, 1536, CHUNK - 1, CHUNK + 5, 2 * CHUNK + 1500])
def test_any_range_is_those_bytes_of_the_whole(folder, start):
    pieces = tar_pieces([(file.path, file) for file in folder_files(folder)], "step-0000004")
    data = whole(pieces)
    for end in (start, start + 700, len(data) - 1):
        assert b"".join(iter_bytes(pieces, start, end)) == data[start:end + 1]


def test_reads_are_at_most_a_chunk(folder):
    pieces = tar_pieces([(file.path, file) for file in folder_files(folder)], "step-0000004")
    plan = list(reads(pieces, 0, total_size(pieces) - 1))
    assert max(length for _, _, length in plan) == CHUNK and sum(length for _, _, length in plan) == total_size(pieces)


def test_a_file_that_shrank_while_sent_is_padded_to_its_announced_size(tmp_path):
    path = tmp_path / "model.safetensors"
    path.write_bytes(b"x" * 100)
    announced = CheckpointFile(PurePosixPath("model.safetensors"), 1000, 0.0, lambda: path.open("rb"))
    pieces = tar_pieces([(announced.path, announced)], "step-0000001")
    data = whole(pieces)
    assert len(data) == total_size(pieces)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        assert tar.extractfile("step-0000001/model.safetensors").read() == b"x" * 100 + b"\0" * 900
