"""Attack: reward code written by a user reaches the network from the sandbox (the database,
Redis, the control plane's own port, another machine), through a dry run against a live server.
Each way out is refused inside the sandbox and comes back as that row's error: a TCP connection
and a UDP datagram to ports this test listens on, and an abstract unix socket it listens on; none
of them receives a byte, and nothing stored changes."""
import socket

import pytest

from tests.security import code_author, hostile_owner

REACHES_OUT = '''
import socket

def reward(prompts, completions, **columns):
    way, port, name = completions[0].split()
    if way == "tcp":
        socket.create_connection(("127.0.0.1", int(port)), timeout=2).sendall(b"leak")
    elif way == "udp":
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"leak", ("127.0.0.1", int(port)))
    else:
        socket.socket(socket.AF_UNIX).connect("\\0" + name)
    return [1.0]
'''
# What each refusal raises: Landlock's (PermissionError) or the namespace's (no route, no such socket).
REFUSED = {"tcp": ("PermissionError", "Network is unreachable"), "udp": ("Network is unreachable",),
           "unix": ("ConnectionRefusedError", "PermissionError")}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = code_author.start(tmp_path_factory.mktemp("server"))
    yield running
    running.stop()


@pytest.fixture
def listeners():
    """A TCP and a UDP port and an abstract unix socket on this machine, for the database and Redis."""
    with socket.create_server(("127.0.0.1", 0)) as tcp, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, \
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as unix:
        udp.bind(("127.0.0.1", 0))
        unix.bind(b"\0grpo-sandbox-attack-%d" % tcp.getsockname()[1])
        unix.listen()
        for listening in (tcp, udp, unix):
            listening.settimeout(0.5)
        yield tcp, udp, unix


def received_nothing(tcp, udp, unix) -> bool:
    for receive in (tcp.accept, lambda: udp.recvfrom(16), unix.accept):
        try:
            receive()
        except TimeoutError:
            continue
        return False
    return True


def test_reward_code_cannot_reach_tcp_udp_or_abstract_unix_sockets_on_this_machine(server, listeners):
    tcp, udp, unix = listeners
    name = unix.getsockname()[1:].decode()
    with hostile_owner.api(server) as api:
        reward = code_author.code_reward(api, "reaches out", REACHES_OUT)
        before = hostile_owner.stored(server)
        response = code_author.dry_run(api, server, reward, [f"tcp {tcp.getsockname()[1]} -",
                                                             f"udp {udp.getsockname()[1]} -", f"unix 0 {name}"])
    assert response.status_code == 200, response.text
    for way, row in zip(REFUSED, response.json()["rows"]):
        assert row["scores"] is None and row["error"]["kind"] == "exception", (way, row)
        assert any(refusal in row["error"]["message"] for refusal in REFUSED[way]), (way, row["error"])
    assert received_nothing(tcp, udp, unix)
    assert hostile_owner.stored(server) == before
