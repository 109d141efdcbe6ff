"""Whether user code may run on this machine: only where its network is refused and its files are
confined, unless the operator has accepted the risk.

Three things refuse the network, each alone enough: a seccomp filter that fails every `socket()`
(socket_filter.py: TCP, UDP, raw, unix sockets, pathname or abstract), a network namespace
(namespaces.py: every IP socket; abstract unix sockets are its own, pathname ones are not), or
Landlock ABI 4+ (TCP connect and bind only). Landlock alone confines its files (confine.py);
without it user code reads what the worker's user may (the control plane's SQLite database, say).
A sandbox process says in its hello what applied; where either is missing, it is refused before
any user code is sent, naming the setting that accepts that risk, read from the environment of
the process that starts sandboxes (the web server for dry runs, the trainer for runs).
"""
import os
from dataclasses import asdict, dataclass, field

ALLOW_NETWORK = "SANDBOX_ALLOW_NETWORK"
ALLOW_UNCONFINED_FILES = "SANDBOX_ALLOW_UNCONFINED_FILES"
_YES, _NO = {"1", "true", "yes", "on"}, {"", "0", "false", "no", "off"}


def _risk_accepted(name: str, environ=None) -> bool:
    """`name`=1; anything but a clear yes keeps the sandbox closed."""
    return (environ if environ is not None else os.environ).get(name, "").strip().lower() in _YES


def network_risk_accepted(environ=None) -> bool:
    """SANDBOX_ALLOW_NETWORK=1."""
    return _risk_accepted(ALLOW_NETWORK, environ)


def files_risk_accepted(environ=None) -> bool:
    """SANDBOX_ALLOW_UNCONFINED_FILES=1."""
    return _risk_accepted(ALLOW_UNCONFINED_FILES, environ)


@dataclass(frozen=True)
class Isolation:
    """What a sandbox process tries, and what it may run without. Tests turn all but one way off
    to check each, and all of them to check the refusals."""
    namespaces: bool = True          # network, PID (and user) namespaces, where the kernel allows
    landlock_network: bool = True    # Landlock's TCP rules, from ABI 4
    socket_filter: bool = True       # seccomp: no socket() (x86_64 and aarch64)
    landlock_files: bool = True      # Landlock's filesystem rules: the only thing that confines files
    allow_network: bool = field(default_factory=network_risk_accepted)
    allow_unconfined_files: bool = field(default_factory=files_risk_accepted)

    def as_dict(self) -> dict:
        return asdict(self)


def _unclear(name: str, environ=None) -> str:
    raw = (environ if environ is not None else os.environ).get(name, "").strip()
    return f" ({name}={raw!r} is not a yes)" if raw.lower() not in _YES | _NO else ""


def refusal(confinement: str, environ=None) -> str:
    """Why user code was not run (its network), and what an operator may do about it."""
    return (f"user code was not run: this machine cannot keep it off the network (it needs a seccomp filter, "
            f"network namespaces, or Landlock ABI 4 or later; here: {confinement}). An operator may accept that "
            f"risk by setting {ALLOW_NETWORK}=1 in the environment of the worker and the control plane"
            f"{_unclear(ALLOW_NETWORK, environ)}.")


def files_refusal(confinement: str, environ=None) -> str:
    """Why user code was not run (its files), and what an operator may do about it."""
    return (f"user code was not run: this machine cannot keep it away from the machine's files (it needs "
            f"Landlock, Linux 5.13 or later with Landlock enabled; here: {confinement}), so it could read "
            f"whatever this process may, the control plane's database included. An operator may accept that "
            f"risk by setting {ALLOW_UNCONFINED_FILES}=1 in the environment of the worker and the control plane"
            f"{_unclear(ALLOW_UNCONFINED_FILES, environ)}.")
