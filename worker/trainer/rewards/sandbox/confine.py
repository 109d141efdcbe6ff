"""Limits a sandboxed process applies to itself before running user code. Standard library only.

- rlimits: address space (memory), size of files it writes, no core files, processes;
- Landlock (Linux >= 5.13, where the kernel has it): the filesystem shrinks to the Python
  installation and system libraries (read-only) plus the process's own working directory, so
  the control plane's files (secret key, database, uploads) and /proc (other processes'
  environments) are out of reach; from Landlock ABI 4 TCP connect/bind are refused (the
  database and Redis on localhost), from ABI 6 signals to processes outside the sandbox too.
Where Landlock is missing the rest still applies, and the hello says so: without it nothing
confines the files, and the parent runs no user code unless the operator accepted that risk
(isolation.py). Namespaces (namespaces.py) are the other way to refuse the network.
"""
import ctypes
import os
import resource
import signal
import sys

# Landlock: include/uapi/linux/landlock.h
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_VERSION_FLAG = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_ALL_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1}
_FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | (1 << 14) | (1 << 15)  # rights that apply to a file
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1
READ_ONLY = EXECUTE | READ_FILE | READ_DIR
SYSTEM_PATHS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/etc/ld.so.cache", "/etc/localtime",
                "/dev/null", "/dev/urandom", "/dev/zero")


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def apply_rlimits(memory_bytes: int, file_bytes: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # Writing past RLIMIT_FSIZE then fails with an OSError instead of killing the process.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def apply_process_limit(processes: int, in_user_namespace: bool) -> str:
    """Bounds a fork bomb. RLIMIT_NPROC counts every process and thread of the real uid: inside
    our own user namespace only the sandbox's, elsewhere the worker's too (torch's threads, say),
    so there the cap is what this uid runs now plus `processes`. Root is exempt from it."""
    base = 0 if in_user_namespace else _tasks_of(os.getuid())
    resource.setrlimit(resource.RLIMIT_NPROC, (base + processes, base + processes))
    if os.geteuid() == 0 and not in_user_namespace:
        return "processes not capped (root outside a user namespace)"
    return f"processes <= {processes}" + ("" if in_user_namespace else f" beyond the {base} its uid runs")


def _tasks_of(uid: int) -> int:
    """Processes and threads of `uid` now, from /proc (read before Landlock hides it)."""
    count = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
        except OSError:
            continue  # gone meanwhile
        if int(fields.get("Uid", "-1").split()[0]) == uid:
            count += int(fields.get("Threads", "1"))
    return count


def readable_paths() -> list[str]:
    python = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
              os.path.dirname(os.path.realpath(sys.executable))}
    return sorted(python) + [p for p in SYSTEM_PATHS if p not in python]


def apply_landlock(workdir: str, handle_tcp: bool = True, handle_files: bool = True) -> tuple[str, bool, bool]:
    """Restricts this process (and its future children); a description of what applied, whether
    TCP is refused (ABI 4+) and whether the filesystem is confined. `handle_tcp` or `handle_files`
    False leaves that open, to test the other ways and the refusals."""
    if not sys.platform.startswith("linux"):
        return "none (Landlock needs Linux)", False, False
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION_FLAG))
    if abi < 1:
        return f"none (Landlock unavailable: {os.strerror(ctypes.get_errno())})", False, False
    handled_fs = _ALL_FS_BY_ABI.get(abi, (1 << 16) - 1) if handle_files else 0
    tcp = abi >= 4 and handle_tcp
    if not handled_fs and not tcp:
        return f"none (Landlock abi {abi} turned off)", False, False
    attr = _RulesetAttr(handled_fs, _NET_BIND_TCP | _NET_CONNECT_TCP if tcp else 0,
                        _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL if abi >= 6 else 0)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return f"none (Landlock ruleset refused: {os.strerror(ctypes.get_errno())})", False, False
    try:
        if handled_fs:
            for path in readable_paths():
                _allow(libc, ruleset, path, READ_ONLY & handled_fs)
            _allow(libc, ruleset, workdir, handled_fs)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.syscall(_RESTRICT_SELF, ruleset, 0) != 0:
            return f"none (Landlock not enforced: {os.strerror(ctypes.get_errno())})", False, False
    finally:
        os.close(ruleset)
    files = "" if handled_fs else ", files not confined (turned off)"
    return f"landlock abi {abi}" + (", tcp refused" if tcp else "") + files, tcp, bool(handled_fs)


def _allow(libc, ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # not on this system
    try:
        if not os.path.isdir(path):
            access &= _FILE_ONLY
        rule = _PathBeneath(access, fd)
        libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0)
    finally:
        os.close(fd)

