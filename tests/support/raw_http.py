"""HTTP over a bare socket, for attacks no polite client makes: a body announced and not sent,
or streamed without a length until the server answers."""
import http.client
import select
import socket
from dataclasses import dataclass

PIECE = 64 * 1024


@dataclass
class Answer:
    status: int
    headers: dict
    body: bytes
    sent: int  # body bytes the client had sent when the answer came


def head(method: str, path: str, port: int, headers: dict) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def announce_and_send_little(port: int, method: str, path: str, headers: dict, declared: int,
                             sent: bytes = b"x" * 16 * 1024, timeout_s: float = 10) -> Answer:
    """Announces `declared` bytes, sends only `sent`, and waits for the answer: one that comes
    was given without the body (a server that reads it first would wait for the rest)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as sock:
        sock.sendall(head(method, path, port, {**headers, "Content-Length": str(declared)}) + sent)
        return _read_answer(sock, len(sent))


def stream_until_answered(port: int, method: str, path: str, headers: dict, most: int,
                          timeout_s: float = 30) -> Answer | None:
    """Sends a chunked body piece by piece until the server answers or `most` bytes went; None
    when it took them all without answering."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as sock:
        sock.sendall(head(method, path, port, {**headers, "Transfer-Encoding": "chunked"}))
        sent = 0
        while sent < most:
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                return _read_answer(sock, sent)
            try:
                sock.sendall(b"%x\r\n" % PIECE + b"y" * PIECE + b"\r\n")
            except (BrokenPipeError, ConnectionResetError):  # it answered and hung up: the answer is read
                return _read_answer(sock, sent)
            sent += PIECE
        readable, _, _ = select.select([sock], [], [], timeout_s)
        return _read_answer(sock, sent) if readable else None


def _read_answer(sock: socket.socket, sent: int) -> Answer:
    response = http.client.HTTPResponse(sock)
    response.begin()
    return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read(), sent)
