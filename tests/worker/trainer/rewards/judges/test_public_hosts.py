"""An endpoint judge's connections reach public addresses only, checked at each connection: a name
that resolved to a public address when the control plane checked it and to 127.0.0.1 or a cloud's
metadata address at the call (DNS rebinding) is refused there, and the judge connects to the
address it checked, never to a second lookup of the name."""
import httpcore
import pytest

from worker.trainer.rewards.judges.addresses import is_public_address
from worker.trainer.rewards.judges.catalog import JudgeLimits, JudgeParams
from worker.trainer.rewards.judges.client import ChatClient
from worker.trainer.rewards.judges.public_hosts import PublicHostsOnly, endpoint_transport, public_only_transport
from worker.trainer.rewards.loader import RewardLoader
from worker.trainer.spec import RewardSpec
from tests.support.stub_judge import KEY, stub_judge

BODY = {"model": "stub-judge", "messages": [{"role": "user", "content": "Answer: good"}]}
PUBLIC = "93.184.216.34"


class RecordingBackend(httpcore.AsyncNetworkBackend):
    """Where the guard lets a connection go: recorded, never opened."""

    def __init__(self):
        self.connected: list[tuple[str, int]] = []

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        self.connected.append((host, port))
        raise httpcore.ConnectError("recorded, not opened")


def answering(*answers: list[str]):
    """A resolver giving each lookup the next of `answers`, as a rebinding name server does."""
    queue = list(answers)

    async def resolve(host, port):
        return queue.pop(0)
    return resolve


@pytest.mark.parametrize("address, public", [
    ("127.0.0.1", False), ("::1", False), ("169.254.169.254", False), ("10.0.0.7", False),
    ("100.64.0.1", False), ("::ffff:127.0.0.1", False), ("224.0.0.1", False), ("0.0.0.0", False),
    # IPv6 standing for an internal IPv4 address: NAT64, 6to4, IPv4-translated and -compatible
    ("64:ff9b::a00:5", False), ("64:ff9b::7f00:1", False), ("2002:a00:5::1", False), ("::ffff:0:a00:5", False),
    ("::7f00:1", False), ("64:ff9b:1::1", False), ("fec0::1", False), ("fe80::1%eth0", False),
    (PUBLIC, True), ("2606:4700:4700::1111", True), ("64:ff9b::5db8:d822", True), ("2002:5db8:d822::1", True),
])
def test_only_addresses_on_the_internet_are_public(address, public):
    assert is_public_address(address) is public


async def test_a_name_rebound_to_loopback_after_its_check_is_refused_at_the_call():
    inner = RecordingBackend()
    guard = PublicHostsOnly(inner, resolver=answering([PUBLIC], ["127.0.0.1"]))
    with pytest.raises(httpcore.ConnectError, match="recorded"):
        await guard.connect_tcp("judge.example", 443)
    with pytest.raises(httpcore.ConnectError, match=r"'judge.example' resolves to an internal address \(127.0.0.1\)"):
        await guard.connect_tcp("judge.example", 443)
    assert inner.connected == [(PUBLIC, 443)]  # the checked address, not the name looked up again


async def test_a_name_with_one_internal_address_among_public_ones_is_refused():
    inner = RecordingBackend()
    guard = PublicHostsOnly(inner, resolver=answering([PUBLIC, "169.254.169.254"]))
    with pytest.raises(httpcore.ConnectError, match="169.254.169.254.*JUDGE_ENDPOINT_HOSTS"):
        await guard.connect_tcp("judge.example", 80)
    assert inner.connected == []


async def test_each_checked_address_is_tried_in_turn_as_a_plain_connect_would():
    inner = RecordingBackend()
    guard = PublicHostsOnly(inner, resolver=answering(["2606:4700:4700::1111", PUBLIC]))
    with pytest.raises(httpcore.ConnectError, match="recorded"):
        await guard.connect_tcp("judge.example", 443)
    assert inner.connected == [("2606:4700:4700::1111", 443), (PUBLIC, 443)]


async def test_a_name_that_does_not_resolve_is_refused_saying_so():
    with pytest.raises(httpcore.ConnectError, match="'judge.invalid' does not resolve"):
        await PublicHostsOnly(RecordingBackend()).connect_tcp("judge.invalid", 443)


async def test_a_judge_client_guarded_so_cannot_reach_a_server_on_this_machine():
    with stub_judge() as base_url:
        limits = JudgeLimits(max_retries=0)
        open_client = ChatClient(base_url, KEY, limits)
        guarded = ChatClient(base_url.replace("127.0.0.1", "localhost"), KEY, limits,
                             transport=public_only_transport())
        answered, refused = await open_client.post(BODY), await guarded.post(BODY)
        await open_client.aclose()
        await guarded.aclose()
    assert answered.raw == '{"score": 8}'  # the server answers: the refusal below is the guard's
    assert refused.raw is None and refused.unreachable
    assert "'localhost' resolves to an internal address" in refused.error


@pytest.mark.parametrize("listed, answered", [(False, False), (True, True)])
def test_the_loader_guards_an_endpoint_judge_unless_its_host_is_listed(listed, answered):
    with stub_judge() as base_url:
        params = JudgeParams(template="Answer: {completion}", endpoint="url", base_url=base_url, model="stub-judge",
                             scale_min=0, scale_max=10, limits=JudgeLimits(max_retries=0))
        warnings: list[str] = []
        loader = RewardLoader(api_keys={"quality": KEY}, on_warning=warnings.append)
        [function] = loader.load([RewardSpec(name="quality", kind="judge", params=params.model_dump(),
                                             has_api_key=True, internal_host_allowed=listed)])
        rewards = function.fn(["p"], ["good"])
        loader.close()
    assert (list(rewards) == [0.8]) is answered
    assert any("internal address (127.0.0.1)" in warning for warning in warnings) is not answered


def test_a_judge_the_environment_sends_through_a_proxy_is_left_to_it(monkeypatch):
    """The proxy resolves the name (the operator's network rules govern it); NO_PROXY's hosts are guarded."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy",
                 "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert endpoint_transport("https://api.example.com/v1") is not None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.lab:3128")
    monkeypatch.setenv("NO_PROXY", "judge.lab")
    assert endpoint_transport("https://api.example.com/v1") is None
    assert endpoint_transport("https://judge.lab/v1") is not None
    assert endpoint_transport("http://api.example.com/v1") is not None  # only https goes through it
