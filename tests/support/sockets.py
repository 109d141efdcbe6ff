"""The TCP addresses a process listens on, read from /proc (Linux): no dependency, no root."""
import ipaddress
import os
from pathlib import Path

LISTEN = "0A"


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue  # closed meanwhile
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    return inodes


def _address(hex_address: str) -> str:
    """/proc/net/tcp's host-order hex (IPv4), or four host-order words (IPv6), as text."""
    raw = bytes.fromhex(hex_address)
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(words))


def listening_addresses(pid: int) -> list[tuple[str, int]]:
    """(address, port) of every TCP socket `pid` listens on."""
    inodes, found = _socket_inodes(pid), []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == LISTEN and fields[9] in inodes:
                host, port = fields[1].split(":")
                found.append((_address(host), int(port, 16)))
    return found
