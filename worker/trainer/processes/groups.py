"""Stopping a child together with everything it started: the child leads its own process group
(start_new_session), and signals go to the whole group."""
import os
import signal
import subprocess


def signal_group(pgid: int, sig: int) -> bool:
    """`sig` to every process of the group; False when the group is gone already."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    return True


def stop_process_group(process: subprocess.Popen, grace_s: float) -> int | None:
    """SIGTERM to the group, up to `grace_s` for its leader to exit, then SIGKILL to the group;
    the leader's exit code. A leader that is gone already is left alone (its group id may be
    someone else's by now)."""
    if process.poll() is not None:
        return process.returncode
    signal_group(process.pid, signal.SIGTERM)
    try:
        return process.wait(grace_s)
    except subprocess.TimeoutExpired:
        return kill_process_group(process)


def kill_process_group(process: subprocess.Popen) -> int | None:
    """SIGKILL to the group at once (orphans of an exited leader too), then reap the leader."""
    signal_group(process.pid, signal.SIGKILL)
    return process.wait()


def ended_how(returncode: int) -> str:
    """How a child ended, for people: `was killed by SIGKILL (signal 9)` or `exited with code 1`."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            return f"was killed by signal {-returncode}"
        return f"was killed by {name} (signal {-returncode})"
    return f"exited with code {returncode}"
