"""Linux namespaces for a sandboxed process. Standard library only (child side).

A network namespace (only its own loopback, down: no socket reaches any machine), a PID namespace
(when its init dies the kernel kills everything in it, so nothing outlives the sandbox: keeper.py),
an IPC namespace (no System V objects of the machine's), and a user namespace around them, which
lets an unprivileged worker create them and makes RLIMIT_NPROC count the sandbox's own processes.
Root needs no user namespace but is exempt from RLIMIT_NPROC: a root worker's sandbox first gives
up its real uid (to nobody), keeping its effective uid to read the Python installation.
Details: docs/security.md#the-sandbox.
"""
import ctypes
import os

CLONE_NEWUSER, CLONE_NEWNET, CLONE_NEWPID, CLONE_NEWIPC = 0x10000000, 0x40000000, 0x20000000, 0x08000000
NOBODY = 65534


class Namespaces:
    """Which namespaces this process made (network, PID and IPC come together, or not at all)."""

    def __init__(self, user: bool = False, net: bool = False, why_not: str = ""):
        self.user, self.net, self.pid, self.ipc, self.why_not = user, net, net, net, why_not

    def describe(self) -> str:
        made = [name for name, made in (("network", self.net), ("pid", self.pid), ("ipc", self.ipc),
                                        ("user", self.user)) if made]
        return f"namespaces: {', '.join(made)}" if made else f"no namespaces ({self.why_not})"


def enter() -> Namespaces:
    """Unshares user, network, PID and IPC namespaces (root: without the user namespace where
    that is refused); what it could. Call it while this process has one thread: the kernel
    refuses a user namespace to a threaded process."""
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.geteuid(), os.getegid()
    if uid == 0:
        os.setresuid(NOBODY, 0, 0)  # the real uid is the one RLIMIT_NPROC charges and exempts (root)
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC) == 0:
        _map_ids(uid, gid)
        return Namespaces(user=True, net=True)
    why = os.strerror(ctypes.get_errno())
    if uid == 0 and libc.unshare(CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC) == 0:
        return Namespaces(net=True)
    return Namespaces(why_not=f"the kernel refused them: {why}")


def _map_ids(uid: int, gid: int) -> None:
    """The same effective ids inside as outside: files the process creates are its owner's."""
    with open("/proc/self/setgroups", "w") as setgroups:
        setgroups.write("deny")  # required before an unprivileged gid_map
    with open("/proc/self/uid_map", "w") as uid_map:
        uid_map.write(f"{uid} {uid} 1")
    with open("/proc/self/gid_map", "w") as gid_map:
        gid_map.write(f"{gid} {gid} 1")


def host_pid() -> int:
    """This process's pid as the parent sees it (/proc belongs to the outer PID namespace)."""
    try:
        return int(os.readlink("/proc/self"))
    except (OSError, ValueError):
        return os.getpid()
