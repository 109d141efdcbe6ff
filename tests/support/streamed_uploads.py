"""A dataset upload streamed over a bare socket with its length declared, a piece at a time (the
test stays light), and the body bytes the server's socket had taken when it answered: refused
before the body, that is at most what the kernel's buffers hold."""
import select
import socket
from contextlib import contextmanager
from pathlib import Path

from tests.support.raw_http import Answer, _read_answer, head
from tests.support.asgi_server import SEED_RUN, AsgiServer

BODY_MB = 100
PIECE = 256 * 1024
KERNEL_BUFFERS = 16 * 1024 ** 2  # what the two sockets' buffers may hold before the server reads a byte
BOUNDARY = "made-up-credentials"
API_TOKEN = """
import json
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
print(json.dumps({"key": Token.objects.create(user=get_user_model().objects.get(username="owner")).key}))
"""


@contextmanager
def upload_server(data_dir: Path, env: dict | None = None):
    """A live control plane whose uploads spool under data_dir/tmp (see `spooled`), seeded with an
    owner who has a run and an API token (`.api_token`)."""
    (data_dir / "tmp").mkdir()
    with AsgiServer(data_dir, env={"TMPDIR": str(data_dir / "tmp"), **(env or {})}) as running:
        running.seed = running.shell_json(SEED_RUN)
        running.api_token = running.shell_json(API_TOKEN)["key"]
        running.data_dir = data_dir
        yield running


def spooled(server) -> list:
    return [p for p in (server.data_dir / "tmp").rglob("*") if p.is_file()]


def multipart_pieces(total: int):
    """A dataset upload of `total` bytes, made a piece at a time."""
    opening = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nbig\r\n"
               f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"source\"\r\n\r\nupload\r\n"
               f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.jsonl\"\r\n"
               "Content-Type: application/octet-stream\r\n\r\n").encode()
    closing = f"\r\n--{BOUNDARY}--\r\n".encode()
    yield opening
    left = total - len(opening) - len(closing)
    row = b'{"prompt": "1+1", "answer": "2"}\n'
    piece = row * (PIECE // len(row))
    while left >= len(piece):
        yield piece
        left -= len(piece)
    yield row * (left // len(row)) + b"\n" * (left % len(row))  # blank lines are skipped
    yield closing


def upload(port: int, path: str, headers: dict, total: int = BODY_MB * 1024 ** 2, timeout_s: float = 60) -> Answer:
    """Sends the upload until the server answers (or hangs up) and returns its answer, with the
    body bytes its socket had accepted by then."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as sock:
        headers = {**headers, "Content-Type": f"multipart/form-data; boundary={BOUNDARY}", "Content-Length": str(total)}
        sock.sendall(head("POST", path, port, headers))
        sent = 0
        for piece in multipart_pieces(total):
            if select.select([sock], [], [], 0)[0]:
                break
            try:
                sock.sendall(piece)
            except (BrokenPipeError, ConnectionResetError):  # it answered and hung up
                break
            sent += len(piece)
        return _read_answer(sock, sent)
