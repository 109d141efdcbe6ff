"""Checkpoints kept in an S3-compatible bucket (AWS S3, MinIO, Ceph, R2...), through boto3.

A checked upload is sent file by file (multipart above ARTIFACT_STORE_MULTIPART_MB, several
parts at once) and only then removed from the control plane's disk; the run's checkpoint is
listed after that, so a bucket that is away leaves the upload where it was, to be completed
again. Downloads stream from the bucket through the control plane, so a browser or a worker
needs no bucket credentials; a download resumed mid-file reads from there with a ranged GET
(bucket_reads.py).
"""
import shutil
from contextlib import contextmanager
from functools import partial
from pathlib import Path, PurePosixPath

import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError
from django.conf import settings

from runs.artifacts.bucket_reads import BucketObjectReader
from runs.artifacts.checkpoint_files import CheckpointFile
from runs.artifacts.store_layout import StoreUnavailable, checkpoint_key, run_key


def transfer_config() -> TransferConfig:
    """Files above ARTIFACT_STORE_MULTIPART_MB go in parts of that size, four at once: a part that
    fails is sent again alone, and no file is held in memory whole."""
    part = settings.ARTIFACT_STORE_MULTIPART_BYTES
    return TransferConfig(multipart_threshold=part, multipart_chunksize=part, max_concurrency=4)


CLIENT = Config(connect_timeout=5, read_timeout=60, retries={"max_attempts": 3, "mode": "standard"})


class S3Store:
    def __init__(self, bucket: str, prefix: str, endpoint_url: str | None, region: str):
        self.bucket, self.prefix = bucket, prefix
        self.location = f"s3://{bucket}/{prefix}".rstrip("/")
        self.client = boto3.client("s3", endpoint_url=endpoint_url, region_name=region, config=CLIENT)

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def publish(self, staged: Path, run_id: int, step: int, on_file=None) -> None:
        folder = self._key(checkpoint_key(run_id, step))
        files = [path for path in sorted(staged.rglob("*")) if path.is_file() and not path.is_symlink()]
        with self._reaching("store the checkpoint"):
            self._delete_under(folder + "/")
            for done, path in enumerate(files, start=1):
                key = f"{folder}/{path.relative_to(staged).as_posix()}"
                self.client.upload_file(str(path), self.bucket, key, Config=transfer_config())
                if on_file:
                    on_file(done, len(files))
        shutil.rmtree(staged)

    def files(self, run_id: int, step: int) -> list[CheckpointFile]:
        folder = self._key(checkpoint_key(run_id, step)) + "/"
        with self._reaching("list the checkpoint"):
            objects = [item for page in self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=folder) for item in page.get("Contents", [])]
        return [CheckpointFile(PurePosixPath(item["Key"][len(folder):]), item["Size"],
                               item["LastModified"].timestamp(), partial(self._open, item["Key"]))
                for item in sorted(objects, key=lambda item: item["Key"])]

    def remove_run(self, run_id: int) -> None:
        with self._reaching("remove the run's checkpoints"):
            self._delete_under(self._key(run_key(run_id)) + "/")

    def presigned_url(self, run_id: int, step: int, relative: PurePosixPath, expires_s: int) -> str:
        """A URL that GETs one file of the checkpoint from the bucket, without credentials, for
        `expires_s` seconds (Range included): for a client the control plane has authorised."""
        key = f"{self._key(checkpoint_key(run_id, step))}/{relative.as_posix()}"
        with self._reaching(f"sign a link to {key}"):
            return self.client.generate_presigned_url("get_object", Params={"Bucket": self.bucket, "Key": key},
                                                      ExpiresIn=expires_s)

    def _open(self, key: str):
        return BucketObjectReader(lambda offset: self._body_from(key, offset))

    def _body_from(self, key: str, offset: int):
        """The object's bytes from `offset` on: a ranged GET, so a resumed download reads no byte twice."""
        with self._reaching(f"read {key}"):
            ranged = {"Range": f"bytes={offset}-"} if offset else {}
            return self.client.get_object(Bucket=self.bucket, Key=key, **ranged)["Body"]

    def _delete_under(self, prefix: str) -> None:
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
            if keys := [{"Key": item["Key"]} for item in page.get("Contents", [])]:
                self.client.delete_objects(Bucket=self.bucket, Delete={"Objects": keys, "Quiet": True})

    def _reaching(self, doing: str):
        return _reaching(f"could not {doing} in {self.location}")


@contextmanager
def _reaching(doing: str):
    """boto3's errors as StoreUnavailable, with what was being done and the bucket's answer."""
    try:
        yield
    except ClientError as exc:
        error = exc.response.get("Error", {})
        raise StoreUnavailable(f"{doing}: {error.get('Code')} {error.get('Message', '')}".strip()) from exc
    except BotoCoreError as exc:
        raise StoreUnavailable(f"{doing}: {exc}") from exc
