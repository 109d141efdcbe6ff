"""Which hosts an endpoint judge may call.

A judge's `base_url` is called from inside the lab: by the control plane's consumer (dry runs,
whose results show the endpoint's answers and errors) and by the workers (runs). A URL naming an
internal address (the database, Redis, a cloud's metadata service at 169.254.169.254, the control
plane itself) would let any user make those machines send requests there and read what comes
back. So a judge's host must resolve to public addresses only, unless an operator lists it in
JUDGE_ENDPOINT_HOSTS (a lab's own judge server on its network; `*` lists every host).

Checked when the reward is saved, and again where it is called from the control plane (a dry run)
and when a run starts, since a name may resolve elsewhere later. A host that does not resolve is
let through when saved (this machine may not see the endpoint's DNS) and refused when called.
"""
import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings

SETTING = "JUDGE_ENDPOINT_HOSTS"


def endpoint_problem(base_url: str, must_resolve: bool = False) -> str | None:
    """Why a judge may not call `base_url`, or None."""
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    if not host:
        return f"base_url: {base_url!r} names no host"
    if _listed(host):
        return None
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        resolved = {info[4][0] for info in socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)}
    except (socket.gaierror, UnicodeError, ValueError):
        return f"base_url: host {host!r} does not resolve from the control plane" if must_resolve else None
    internal = sorted(address for address in resolved if not _public(address))
    if internal:
        return (f"base_url: host {host!r} is an internal address ({', '.join(internal)}); judges call public "
                f"endpoints only, unless an operator lists the host in the setting {SETTING}")
    return None


def _listed(host: str) -> bool:
    allowed = {name.lower() for name in getattr(settings, SETTING, [])}
    return "*" in allowed or host in allowed


def _public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # a link-local IPv6 address may carry its zone
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast
