"""A real S3-compatible server for the artifact store's tests: moto's standalone server.

`moto_server` (from the `moto[server]` package in requirements-dev.txt) answers the S3 REST API
over HTTP on a local port, keeping objects in its own process; boto3 talks to it exactly as to
AWS or MinIO. One server per test session; each test gets a bucket of its own.
"""
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx

from tests.support.asgi_server import free_port

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "test-key", "AWS_SECRET_ACCESS_KEY": "test-secret"}


class S3Server:
    def __init__(self, log_dir: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_dir / "moto_server.log"
        self.process = None

    def start(self, timeout_s: float = 60) -> "S3Server":
        command = [str(Path(sys.executable).with_name("moto_server")), "-H", "127.0.0.1", "-p", str(self.port)]
        self.process = subprocess.Popen(command, stdout=self.log_path.open("w"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"moto_server exited: {self.log_path.read_text()[-2000:]}")
            try:
                httpx.get(f"{self.url}/moto-api/", timeout=2)
                return self
            except httpx.TransportError:
                time.sleep(0.2)
        raise RuntimeError(f"moto_server did not answer within {timeout_s} s")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.url, region_name="us-east-1",
                            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
                            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"])

    def new_bucket(self) -> str:
        name = f"test-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=name)
        return name
