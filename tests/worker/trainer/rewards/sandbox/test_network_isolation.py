"""User code runs only where its network is refused: by a seccomp filter (no socket at all), by a
network namespace (any IP socket, abstract unix sockets), or by Landlock ABI 4+ (TCP); where none
holds it is refused, naming the setting with which an operator accepts the risk."""
import socket

import pytest

from tests.support.sandbox import TEST_LIMITS, call, reward_source
from worker.trainer.rewards.sandbox import SandboxError, SandboxPool
from worker.trainer.rewards.sandbox.isolation import Isolation, network_risk_accepted, refusal

SOCKET_FILTER_ONLY = Isolation(namespaces=False, landlock_network=False, allow_network=False)
NAMESPACE_ONLY = Isolation(landlock_network=False, socket_filter=False, allow_network=False)
LANDLOCK_ONLY = Isolation(namespaces=False, socket_filter=False, allow_network=False)
NONE = Isolation(namespaces=False, landlock_network=False, socket_filter=False, allow_network=False)


def pool_with(isolation: Isolation, needs: str) -> SandboxPool:
    pool = SandboxPool(size=1, limits=TEST_LIMITS, isolation=isolation)
    try:
        confinement = pool.confinement
    except SandboxError as exc:
        pool.close()
        pytest.skip(f"this kernel cannot refuse the network this way: {exc.message}")
    if needs not in confinement:
        pool.close()
        pytest.skip(f"not on this kernel: {confinement}")
    return pool


@pytest.fixture
def listener():
    """A TCP port on this machine, standing for the database or Redis."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(0.5)
        yield server


def connects(port: int) -> str:
    return reward_source(f"socket.create_connection(('127.0.0.1', {port}), timeout=2)\nreturn [1.0, 1.0]",
                         imports="import socket")


def accepted_nothing(server: socket.socket) -> bool:
    try:
        server.accept()[0].close()
    except TimeoutError:
        return True
    return False


@pytest.mark.parametrize(("isolation", "needs", "refused_with"), [
    pytest.param(SOCKET_FILTER_ONLY, "seccomp: no sockets", "PermissionError: [Errno 1] Operation not permitted",
                 id="socket-filter"),
    pytest.param(NAMESPACE_ONLY, "namespaces: network", "Network is unreachable", id="network-namespace"),
    pytest.param(LANDLOCK_ONLY, "tcp refused", "PermissionError", id="landlock-tcp"),
])
def test_each_way_alone_refuses_a_tcp_connection_to_this_machine(isolation, needs, refused_with, listener):
    with pool_with(isolation, needs) as pool:
        with pytest.raises(SandboxError) as raised:
            call(pool, connects(listener.getsockname()[1]))
    assert raised.value.kind == "exception" and refused_with in raised.value.message
    assert accepted_nothing(listener)


def test_a_network_namespace_refuses_udp_and_abstract_unix_sockets_too():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, \
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as unix, pool_with(NAMESPACE_ONLY, "network") as pool:
        udp.bind(("127.0.0.1", 0))
        udp.settimeout(0.5)
        unix.bind(b"\0grpo-sandbox-test-%d" % udp.getsockname()[1])
        unix.listen()
        source = reward_source(f"""
refused = []
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"leak", ("127.0.0.1", {udp.getsockname()[1]}))
except OSError as exc:
    refused.append("udp: " + exc.strerror)
try:
    socket.socket(socket.AF_UNIX).connect({unix.getsockname()!r})
except OSError as exc:
    refused.append("unix: " + exc.strerror)
print(refused)
return [float(len(refused))] * len(completions)""", imports="import socket")
        result = call(pool, source)
        assert result.values == [2.0, 2.0], result.output
        with pytest.raises(TimeoutError):
            udp.recvfrom(16)


def test_the_socket_filter_refuses_a_unix_socket_file_that_the_others_leave_reachable(tmp_path):
    with socket.socket(socket.AF_UNIX) as server, pool_with(SOCKET_FILTER_ONLY, "seccomp: no sockets") as pool:
        server.bind(str(tmp_path / "db.sock"))  # the database's socket file, say
        server.listen()
        server.settimeout(0.5)
        with pytest.raises(SandboxError) as raised:
            call(pool, reward_source(f"socket.socket(socket.AF_UNIX).connect({str(tmp_path / 'db.sock')!r})\n"
                                     "return [1.0, 1.0]", imports="import socket"))
        assert "PermissionError: [Errno 1] Operation not permitted" in raised.value.message
        assert accepted_nothing(server)


def test_where_nothing_refuses_the_network_user_code_is_refused_naming_the_setting():
    pool = SandboxPool(size=1, limits=TEST_LIMITS, isolation=NONE)
    with pytest.raises(SandboxError) as raised:
        call(pool, reward_source("return [1.0, 1.0]"))
    pool.close()
    assert raised.value.kind == "refused"
    assert raised.value.message.startswith("user code was not run: this machine cannot keep it off the network")
    assert "SANDBOX_ALLOW_NETWORK=1" in raised.value.message
    assert pool.processes_started == 0


def test_an_operator_who_accepts_the_risk_gets_user_code_run_and_told_so():
    with SandboxPool(size=1, limits=TEST_LIMITS,
                     isolation=Isolation(namespaces=False, landlock_network=False, socket_filter=False,
                                         allow_network=True)) as pool:
        assert call(pool, reward_source("return [1.0, 1.0]")).values == [1.0, 1.0]
        assert pool.confinement.endswith("network open (SANDBOX_ALLOW_NETWORK=1)")


@pytest.mark.parametrize(("value", "accepted"), [("1", True), ("yes", True), (" TRUE ", True), ("", False),
                                                 ("0", False), ("off", False), ("maybe", False)])
def test_only_a_clear_yes_accepts_the_risk(value, accepted):
    assert network_risk_accepted({"SANDBOX_ALLOW_NETWORK": value}) is accepted


def test_an_unclear_setting_is_named_in_the_refusal():
    unclear = refusal("landlock abi 3", {"SANDBOX_ALLOW_NETWORK": "maybe"})
    assert "(SANDBOX_ALLOW_NETWORK='maybe' is not a yes)" in unclear
    assert "is not a yes" not in refusal("landlock abi 3", {})
