"""A TCP proxy in front of a real server that cuts connections, as a flaky network or a restarted
load balancer does: the n-th connection's answer is cut after cuts[n] bytes (headers included),
later connections pass whole. It keeps each request's head, so a test sees what was asked (Range).
"""
import socket
import threading

from tests.support.asgi_server import free_port


class CuttingProxy:
    def __init__(self, upstream_port: int, cuts: list[int]):
        self.upstream_port, self.cuts, self.requests = upstream_port, list(cuts), []
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._lock = threading.Lock()

    def __enter__(self) -> "CuttingProxy":
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._listener.close()

    def request_heads(self) -> list[dict[str, str]]:
        """Each request's headers (lower-case names), in the order they came."""
        heads = []
        for raw in self.requests:
            lines = raw.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")[1:]
            fields = (line.partition(":") for line in lines)
            heads.append({name.strip().lower(): value.strip() for name, _, value in fields})
        return heads

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                cut = self.cuts.pop(0) if self.cuts else None
            threading.Thread(target=self._serve, args=(client, cut), daemon=True).start()

    def _serve(self, client: socket.socket, cut: int | None) -> None:
        upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
        head = bytearray()
        self.requests.append(head)
        threading.Thread(target=self._to_upstream, args=(client, upstream, head), daemon=True).start()
        sent = 0
        try:
            while data := upstream.recv(65536):
                if cut is not None and sent + len(data) >= cut:
                    client.sendall(data[:cut - sent])
                    return
                client.sendall(data)
                sent += len(data)
        except OSError:
            pass
        finally:
            for sock in (client, upstream):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()

    @staticmethod
    def _to_upstream(client: socket.socket, upstream: socket.socket, head: bytearray) -> None:
        try:
            while data := client.recv(65536):
                if len(head) < 16384:
                    head.extend(data)
                upstream.sendall(data)
        except OSError:
            pass
