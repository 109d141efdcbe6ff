"""Attack: reward code written by a user reaches the network from the sandbox (the database,
Redis, the control plane's own port, another machine), through a dry run against a live server.
Each way out is refused inside the sandbox and comes back as that row's error: a TCP connection
and a UDP datagram to ports this test listens on, an abstract unix socket and a unix socket file
(the database's, say) it listens on; none of them receives a byte, and nothing stored changes."""
import socket

import pytest

from tests.support import code_author, hostile_owner

REACHES_OUT = '''
import socket

def reward(prompts, completions, **columns):
    way, port, name = completions[0].split()
    if way == "tcp":
        socket.create_connection(("127.0.0.1", int(port)), timeout=2).sendall(b"leak")
    elif way == "udp":
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"leak", ("127.0.0.1", int(port)))
    elif way == "abstract":
        socket.socket(socket.AF_UNIX).connect("\\0" + name)
    else:
        socket.socket(socket.AF_UNIX).connect(name)
    return [1.0]
'''
# The seccomp filter refuses every socket; where it cannot apply, the namespace and Landlock refuse
# all but the socket file (the row would score, failing the test).
REFUSED = {"tcp": ("PermissionError", "Network is unreachable"), "udp": ("PermissionError", "Network is unreachable"),
           "abstract": ("PermissionError", "ConnectionRefusedError"), "file": ("PermissionError",)}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = code_author.start(tmp_path_factory.mktemp("server"))
    yield running
    running.stop()


@pytest.fixture
def listeners(tmp_path):
    """A TCP and a UDP port, an abstract unix socket and a socket file on this machine, for the
    database and Redis."""
    with socket.create_server(("127.0.0.1", 0)) as tcp, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, \
            socket.socket(socket.AF_UNIX) as abstract, socket.socket(socket.AF_UNIX) as file:
        udp.bind(("127.0.0.1", 0))
        abstract.bind(b"\0grpo-sandbox-attack-%d" % tcp.getsockname()[1])
        file.bind(str(tmp_path / "db.sock"))
        for listening in (tcp, udp, abstract, file):
            if listening is not udp:
                listening.listen()
            listening.settimeout(0.5)
        yield tcp, udp, abstract, file


def received_nothing(tcp, udp, abstract, file) -> bool:
    for receive in (tcp.accept, lambda: udp.recvfrom(16), abstract.accept, file.accept):
        try:
            receive()
        except TimeoutError:
            continue
        return False
    return True


def test_reward_code_cannot_reach_tcp_udp_or_unix_sockets_on_this_machine(server, listeners):
    tcp, udp, abstract, file = listeners
    with hostile_owner.api(server) as api:
        reward = code_author.code_reward(api, "reaches out", REACHES_OUT)
        before = hostile_owner.stored(server)
        response = code_author.dry_run(api, server, reward, [
            f"tcp {tcp.getsockname()[1]} -", f"udp {udp.getsockname()[1]} -",
            f"abstract 0 {abstract.getsockname()[1:].decode()}", f"file 0 {file.getsockname()}"])
    assert response.status_code == 200, response.text
    for way, row in zip(REFUSED, response.json()["rows"]):
        assert row["scores"] is None and row["error"]["kind"] == "exception", (way, row)
        assert any(refusal in row["error"]["message"] for refusal in REFUSED[way]), (way, row["error"])
    assert received_nothing(*listeners)
    assert hostile_owner.stored(server) == before
