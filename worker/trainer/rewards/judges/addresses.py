"""Which IP addresses an endpoint judge may reach: the one rule the control plane's checks
(runs/rewards/models/endpoint_hosts.py) and the judge's connections (public_hosts.py) share.

An IPv6 address can carry an IPv4 one (IPv4-mapped, 6to4, a NAT64 gateway's 64:ff9b::/96, the
old IPv4-compatible form): a worker behind NAT64 reaches 10.0.0.5 at 64:ff9b::a00:5. Such an
address is judged by the IPv4 address inside it; any other IPv6 address must be global unicast
(2000::/3), which leaves out site-local and local-use NAT64 addresses that Python calls global."""
import ipaddress

IPV4_INSIDE = (ipaddress.ip_network("64:ff9b::/96"),  # NAT64's well-known prefix
               ipaddress.ip_network("::ffff:0:0:0/96"),  # IPv4-translated
               ipaddress.ip_network("::/96"))  # IPv4-compatible (deprecated); :: and ::1 among them
GLOBAL_UNICAST = ipaddress.ip_network("2000::/3")


def is_public_address(address: str) -> bool:
    """Whether an IP address is reachable on the internet: not loopback, private, link-local
    (169.254.169.254, a cloud's metadata service), shared, reserved or multicast, nor an IPv6
    address standing for such an IPv4 one."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # a link-local IPv6 address may carry its zone
    if isinstance(ip, ipaddress.IPv6Address):
        inside = ip.ipv4_mapped or ip.sixtofour or next(
            (ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF) for network in IPV4_INSIDE if ip in network), None)
        if inside is not None:
            return _public(inside)
        if ip not in GLOBAL_UNICAST:
            return False
    return _public(ip)


def _public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return ip.is_global and not ip.is_multicast
