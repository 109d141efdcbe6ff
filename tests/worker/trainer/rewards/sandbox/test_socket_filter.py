"""The seccomp filter, installed in a process of its own (it cannot be taken back): no socket of
any family, nor through io_uring or the x32 numbers; socketpair still works."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SANDBOX = Path(__file__).resolve().parents[5] / "worker" / "trainer" / "rewards" / "sandbox"
PROBE = """
import ctypes, json, os, socket, sys
sys.path.insert(0, sys.argv[1])
import socket_filter
told, refused = socket_filter.refuse_sockets()
libc = ctypes.CDLL(None, use_errno=True)
def errno_of(call):
    try:
        call()
    except OSError as exc:
        return exc.errno
    return 0
def raw(number, *args):
    return 0 if libc.syscall(number, *args) >= 0 else ctypes.get_errno()
a, b = socket.socketpair()
a.sendall(b"x")
print(json.dumps({"told": told, "refused": refused, "pair": b.recv(1).decode(),
    "families": [errno_of(lambda f=f, t=t: socket.socket(f, t)) for f, t in (
        (socket.AF_INET, socket.SOCK_STREAM), (socket.AF_INET6, socket.SOCK_STREAM),
        (socket.AF_UNIX, socket.SOCK_STREAM), (socket.AF_PACKET, socket.SOCK_RAW))],
    "udp": errno_of(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)),
    "io_uring_setup": raw(425, 8, 0), "x32_socket": raw(0x40000000 + 41, 2, 1, 0)}))
"""


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the x32 check is x86_64's")
def test_no_socket_of_any_family_or_way_only_socketpair():
    done = subprocess.run([sys.executable, "-I", "-c", PROBE, str(SANDBOX)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["told"] == "seccomp: no sockets" and seen["refused"] is True
    assert seen["pair"] == "x"
    assert seen["families"] == [1, 1, 1, 1] and seen["udp"] == 1  # EPERM each
    assert seen["io_uring_setup"] == 1 and seen["x32_socket"] == 1
