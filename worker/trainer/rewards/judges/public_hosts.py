"""An endpoint judge connects to public addresses only, checked at each connection.

The control plane checks a judge's host when the reward is saved and when a run starts
(runs/rewards/endpoint_hosts.py). A name can resolve elsewhere a moment later: a host whose DNS
answers with a public address for the check and 127.0.0.1, or a cloud's metadata address, for
the calls (DNS rebinding) would have the worker send its requests inside the lab and the run's
samples show what came back. So the judge's client resolves the name itself at each new
connection, refuses it when any address is internal, and connects to the address it checked,
never to a second lookup. TLS still names and verifies the host.

A host the operator lists in JUDGE_ENDPOINT_HOSTS (a lab's own judge server) is let through by
the control plane, which says so in the run's spec (RewardSpec.internal_host_allowed).
"""
import socket
import typing

import anyio
import httpcore
import httpx

from worker.trainer.rewards.judges.addresses import is_public_address

Resolve = typing.Callable[[str, int], typing.Awaitable[list[str]]]


async def resolve(host: str, port: int) -> list[str]:
    """The addresses `host` resolves to, in the resolver's order."""
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class PublicHostsOnly(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, refusing a connection whose host resolves to an internal address."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend | None = None, resolver: Resolve = resolve):
        self._inner = inner or httpcore.AnyIOBackend()
        self._resolve = resolver

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
                          ) -> httpcore.AsyncNetworkStream:
        try:
            addresses = await self._resolve(host, port)
        except (OSError, UnicodeError) as exc:
            raise httpcore.ConnectError(f"host {host!r} does not resolve ({exc})") from exc
        internal = [address for address in addresses if not is_public_address(address)]
        if internal or not addresses:
            raise httpcore.ConnectError(
                f"host {host!r} resolves to an internal address ({', '.join(internal) or 'none'}) at this "
                "call: refused (judges call public endpoints only, unless an operator lists the host in "
                "JUDGE_ENDPOINT_HOSTS)")
        return await self._inner.connect_tcp(addresses[0], port, timeout=timeout, local_address=local_address,
                                              socket_options=socket_options)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
                                  ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("a judge endpoint is a URL, never a local socket")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def public_only_transport(backend: httpcore.AsyncNetworkBackend | None = None) -> httpx.AsyncHTTPTransport:
    """httpx's own transport, its connection pool built over PublicHostsOnly (httpx takes no network
    backend, so the pool it made is replaced by one made as it makes it, with httpx's defaults)."""
    transport = httpx.AsyncHTTPTransport()
    limits = httpx.Limits()
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=httpx.create_ssl_context(), max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections, keepalive_expiry=limits.keepalive_expiry,
        network_backend=backend or PublicHostsOnly())
    return transport
