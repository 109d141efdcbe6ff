"""Which hosts an endpoint judge may call.

A judge's `base_url` is called from inside the lab (the control plane's dry runs, the workers'
runs); an internal address there (the database, Redis, a cloud's metadata service) would let any
user make those machines send requests and read what comes back. So a host must resolve to
public addresses only, unless an operator lists it in JUDGE_ENDPOINT_HOSTS. Checked when the
reward is saved (a host that does not resolve is let through), before a dry run calls it and when
a run starts; the judge's client checks each connection again (public_hosts.py).
Details: docs/security.md#judges-keys-and-endpoints.
"""
import socket
from urllib.parse import urlsplit

from django.conf import settings

from worker.trainer.for_control_plane.judges import is_public_address

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
        resolved = {str(info[4][0]) for info in socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)}
    except (socket.gaierror, UnicodeError, ValueError):
        return f"base_url: host {host!r} does not resolve from the control plane" if must_resolve else None
    internal = sorted(address for address in resolved if not is_public_address(address))
    if internal:
        return (f"base_url: host {host!r} is an internal address ({', '.join(internal)}); judges call public "
                f"endpoints only, unless an operator lists the host in the setting {SETTING}")
    return None


def host_listed(base_url: str) -> bool:
    """Whether an operator lets judges call `base_url`'s host although it is internal."""
    return _listed((urlsplit(base_url).hostname or "").lower())


def _listed(host: str) -> bool:
    allowed = {name.lower() for name in getattr(settings, SETTING, [])}
    return "*" in allowed or host in allowed
