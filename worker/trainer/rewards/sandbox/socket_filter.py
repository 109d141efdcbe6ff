"""A seccomp filter: user code opens no socket of any kind. Standard library only (child side).

Landlock refuses TCP only and a network namespace leaves pathname unix sockets reachable (the
database's or Redis' socket file, the Docker socket for a root worker), so `socket()` itself
fails with EPERM, whatever its family: TCP, UDP, unix, raw, netlink, packet. `socketpair()` stays
(asyncio and multiprocessing talk to themselves through it). Closed around it, each a way to a
socket without calling `socket()`: io_uring (its own socket operation), pidfd_getfd (another
process's socket), the x32 syscall numbers and any foreign architecture (other numbers).
"""
import ctypes
import errno
import os

# (AUDIT_ARCH_*, socket, io_uring_setup, pidfd_getfd) for the architectures we know the numbers of.
_SYSCALLS = {"x86_64": (0xC000003E, 41, 425, 438), "aarch64": (0xC00000B7, 198, 425, 438)}
_X32_SYSCALL_BIT = 0x40000000
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_OFFSET_NR, _OFFSET_ARCH = 0, 4
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2


class _Instruction(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Instruction))]


def refuse_sockets() -> tuple[str, bool]:
    """Installs the filter on this process and its future children; a description, and whether
    sockets are now refused."""
    machine = os.uname().machine
    if machine not in _SYSCALLS:
        return f"no seccomp filter (no syscall numbers for {machine})", False
    program = _program(*_SYSCALLS[machine], x32=machine == "x86_64")
    instructions = (_Instruction * len(program))(*[_Instruction(*step) for step in program])
    filter_program = _Program(len(program), instructions)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
            libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(filter_program), 0, 0) != 0:
        return f"no seccomp filter ({os.strerror(ctypes.get_errno())})", False
    return "seccomp: no sockets", True


def _program(arch: int, socket: int, io_uring_setup: int, pidfd_getfd: int, x32: bool) -> list[tuple]:
    """Classic BPF over struct seccomp_data: a foreign architecture, an x32 number or one of the
    refused calls fails with EPERM; anything else is allowed."""
    refused = [socket, io_uring_setup, pidfd_getfd]
    checks = ([(_JGE_K, "deny", 0, _X32_SYSCALL_BIT)] if x32 else []) + [(_JEQ_K, "deny", 0, nr) for nr in refused]
    deny = (_RET_K, 0, 0, _RET_ERRNO | errno.EPERM)
    body = [(_LD_W_ABS, 0, 0, _OFFSET_ARCH), (_JEQ_K, 1, 0, arch), deny,
            (_LD_W_ABS, 0, 0, _OFFSET_NR), *checks, (_RET_K, 0, 0, _RET_ALLOW), deny]
    deny_at = len(body) - 1
    program = []
    for at, (code, jt, jf, k) in enumerate(body):
        program.append((code, deny_at - at - 1 if jt == "deny" else jt, jf, k))
    return program
