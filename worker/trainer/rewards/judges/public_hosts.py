"""An endpoint judge connects to public addresses only, checked at each connection.

The control plane checks a judge's host when the reward is saved and when a run starts
(runs/rewards/models/endpoint_hosts.py), but a name can resolve elsewhere a moment later (DNS
rebinding). So the judge's client resolves the name itself at each new connection, refuses it
when any address is internal, and connects to the address it checked; TLS still names the host.
A host the operator lists (RewardSpec.internal_host_allowed) is let through, and a URL sent
through a proxy is the proxy's to resolve (httpx's own transport then).
Details: docs/security.md#judges-keys-and-endpoints.
"""
import socket
import typing

import anyio
import httpcore
import httpx
from httpx._utils import URLPattern, get_environment_proxies  # how httpx itself picks a proxy

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
        if not addresses:
            raise httpcore.ConnectError(f"host {host!r} resolves to no address")
        internal = [address for address in addresses if not is_public_address(address)]
        if internal:
            raise httpcore.ConnectError(
                f"host {host!r} resolves to an internal address ({', '.join(internal)}) at this call: refused "
                "(judges call public endpoints only, unless an operator lists the host in JUDGE_ENDPOINT_HOSTS)")
        failure: httpcore.ConnectError | None = None
        for address in addresses:  # each checked address in the resolver's order, as a plain connect would
            try:
                return await self._inner.connect_tcp(address, port, timeout=timeout, local_address=local_address,
                                                     socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc if isinstance(exc, httpcore.ConnectError) else httpcore.ConnectError(str(exc))
        assert failure is not None
        raise failure

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
                                  ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("a judge endpoint is a URL, never a local socket")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def endpoint_transport(url: str, internal_host_allowed: bool = False) -> httpx.AsyncHTTPTransport | None:
    """An endpoint judge's transport: public addresses only, unless the operator listed its host
    or the environment sends `url` through a proxy (None: httpx's own transport)."""
    return None if internal_host_allowed or environment_proxy(url) else public_only_transport()


def environment_proxy(url: str) -> str | None:
    """The proxy the environment names for `url`, as httpx picks it (its most specific pattern
    first; NO_PROXY's patterns name none)."""
    target = httpx.URL(url)
    patterns = sorted(((URLPattern(pattern), proxy) for pattern, proxy in get_environment_proxies().items()),
                      key=lambda item: item[0])
    return next((proxy for pattern, proxy in patterns if pattern.matches(target)), None)


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
