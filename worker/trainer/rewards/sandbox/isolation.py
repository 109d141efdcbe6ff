"""Whether user code may run on this machine: only where its network is refused, unless the
operator has accepted the risk.

Three things refuse the network, each alone enough: a seccomp filter that fails every `socket()`
(socket_filter.py: TCP, UDP, raw, unix sockets, pathname or abstract), a network namespace
(namespaces.py: every IP socket; abstract unix sockets are its own, pathname ones are not), or
Landlock ABI 4+ (TCP connect and bind only). A sandbox process says in its hello which applied;
where none did, it is refused before any user code is sent, with a message naming the setting
that accepts the risk. The setting is read from the environment of the process that starts
sandboxes (the web server for dry runs, the trainer for runs), so a worker and the control plane
each say it for themselves.
"""
import os
from dataclasses import asdict, dataclass, field

ALLOW_NETWORK = "SANDBOX_ALLOW_NETWORK"
_YES, _NO = {"1", "true", "yes", "on"}, {"", "0", "false", "no", "off"}


def network_risk_accepted(environ=None) -> bool:
    """SANDBOX_ALLOW_NETWORK=1; anything but a clear yes keeps the sandbox closed."""
    return (environ if environ is not None else os.environ).get(ALLOW_NETWORK, "").strip().lower() in _YES


@dataclass(frozen=True)
class Isolation:
    """What a sandbox process tries, and what it may run without. Tests turn all but one way off
    to check each, and all three to check the refusal."""
    namespaces: bool = True          # network, PID (and user) namespaces, where the kernel allows
    landlock_network: bool = True    # Landlock's TCP rules, from ABI 4
    socket_filter: bool = True       # seccomp: no socket() (x86_64 and aarch64)
    allow_network: bool = field(default_factory=network_risk_accepted)

    def as_dict(self) -> dict:
        return asdict(self)


def refusal(confinement: str, environ=None) -> str:
    """Why user code was not run, and what an operator may do about it."""
    raw = (environ if environ is not None else os.environ).get(ALLOW_NETWORK, "").strip()
    unclear = f" ({ALLOW_NETWORK}={raw!r} is not a yes)" if raw.lower() not in _YES | _NO else ""
    return (f"user code was not run: this machine cannot keep it off the network (it needs a seccomp filter, "
            f"network namespaces, or Landlock ABI 4 or later; here: {confinement}). An operator may accept that "
            f"risk by setting {ALLOW_NETWORK}=1 in the environment of the worker and the control plane{unclear}.")
