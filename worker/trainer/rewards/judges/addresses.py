"""Which IP addresses an endpoint judge may reach: the one rule the control plane's checks
(runs/rewards/endpoint_hosts.py) and the judge's connections (public_hosts.py) share."""
import ipaddress


def is_public_address(address: str) -> bool:
    """Whether an IP address is reachable on the internet: not loopback, private, link-local
    (169.254.169.254, a cloud's metadata service), shared, reserved or multicast."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # a link-local IPv6 address may carry its zone
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast
