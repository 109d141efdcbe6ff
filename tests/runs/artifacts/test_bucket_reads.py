"""A checkpoint kept in a bucket (a real moto server) read from mid-file: the bytes from there,
fetched with a ranged GET, not by reading and dropping those before; a tar resumed mid-member
from the bucket is the same bytes as the whole."""
import io
import os

import pytest

from runs.artifacts.bucket_reads import BucketObjectReader
from runs.artifacts.export import tar_pieces
from runs.artifacts.pieces import iter_bytes, total_size
from runs.artifacts.stores import artifact_store, checkpoint_key

MODEL = os.urandom(3 * 2 ** 20 + 17)


@pytest.fixture
def stored(s3_server, s3_bucket):
    client = s3_server.client()
    folder = f"grpo/{checkpoint_key(7, 40)}"
    client.put_object(Bucket=s3_bucket, Key=f"{folder}/config.json", Body=b'{"a": 1}')
    client.put_object(Bucket=s3_bucket, Key=f"{folder}/model.safetensors", Body=MODEL)
    return artifact_store().files(7, 40)


def test_a_stored_file_sought_mid_way_reads_from_there(stored):
    model = next(file for file in stored if file.path.name == "model.safetensors")
    with model.open() as handle:
        handle.seek(2 ** 20 + 3)
        assert handle.read(100) == MODEL[2 ** 20 + 3:2 ** 20 + 103]
        assert handle.read() == MODEL[2 ** 20 + 103:]


def test_a_tar_from_the_bucket_resumed_mid_member_is_the_same_bytes(stored):
    pieces = tar_pieces([(file.path, file) for file in stored], "step-0000040")
    whole = b"".join(iter_bytes(pieces, 0, total_size(pieces) - 1))
    start = 2048 + 2 ** 20 + 5  # inside the model file
    assert b"".join(iter_bytes(pieces, start, total_size(pieces) - 1)) == whole[start:]


def test_the_reader_asks_the_bucket_from_the_offset_it_was_sought_to():
    asked = []

    def body_from(offset):
        asked.append(offset)
        return io.BytesIO(MODEL[offset:])

    reader = BucketObjectReader(body_from)
    reader.seek(1000)
    reader.seek(5000)  # no GET until bytes are wanted
    assert reader.read(10) == MODEL[5000:5010] and reader.read(5) == MODEL[5010:5015]
    reader.seek(0)
    assert reader.read(3) == MODEL[:3] and asked == [5000, 0]
