"""Calling the reward sandbox from tests: short limits, reward sources written inline, and the
processes user code left on this machine."""
import os
import time
from contextlib import contextmanager

from worker.trainer.rewards.sandbox import SandboxLimits, SandboxPool

# Short enough to keep the hostile cases quick, long enough for a loaded 2-core machine.
TEST_LIMITS = SandboxLimits(call_timeout_s=3.0, load_timeout_s=20.0, memory_bytes=512 << 20, output_bytes=256 << 10)


def reward_source(body: str, imports: str = "") -> str:
    """A reward function whose body is `body` (indented for you)."""
    indented = "\n".join("    " + line for line in body.strip("\n").splitlines())
    return f"{imports}\ndef reward(prompts, completions, **columns):\n{indented}\n"


def call(pool, source: str, completions=("a", "bb"), **columns):
    completions = list(completions)
    return pool.call(source, ["q"] * len(completions), completions,
                     {name: list(values) for name, values in columns.items()})


# User code that leaves a grandchild behind in a session of its own (fork, setsid, fork, exec),
# `sleep` with an argument that names it on this machine; then runs `then`.
LEAVES_A_SLEEPER = '''
def reward(prompts, completions, **columns):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv("/bin/sleep", ["sleep", "{seconds}"])
        os._exit(0)
    os.wait()
    {then}
'''


def leaves_a_sleeper(seconds: str, then: str = "return [0.0] * len(completions)") -> str:
    return "import os\n" + LEAVES_A_SLEEPER.format(seconds=seconds, then=then)


def pids_running(*argv: str) -> list[int]:
    """Processes on this machine (any namespace) whose command line is exactly `argv`."""
    wanted, found = "\0".join(argv) + "\0", []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline") as cmdline:
                    if cmdline.read() == wanted and not _zombie(entry.name):
                        found.append(int(entry.name))
            except OSError:
                continue  # gone meanwhile
    return found


def started(*argv: str, within_s: float = 10.0) -> list[int]:
    """`pids_running(*argv)` once there are some: a grandchild may not have called exec yet when
    its call returns."""
    deadline = time.monotonic() + within_s
    while not (found := pids_running(*argv)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def _zombie(pid: str) -> bool:
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] == "Z"


def gone(pids: list[int], within_s: float = 10.0) -> bool:
    """Whether every one of `pids` has ended (a zombie has), waiting up to `within_s` for the
    kernel to finish killing them."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not any(_alive(pid) for pid in pids):
            return True
        time.sleep(0.1)
    return False


def _alive(pid: int) -> bool:
    try:
        return not _zombie(str(pid))
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


@contextmanager
def one_pool_for_every_owner(monkeypatch, isolation):
    """The control plane's dry runs, whoever asks, on one pool of one process isolated as given
    (tests turn a way of confining off to see the refusal)."""
    from runs.rewards import sandbox_pool

    pool = SandboxPool(size=1, limits=TEST_LIMITS, isolation=isolation)
    monkeypatch.setattr(sandbox_pool, "owner_pools", sandbox_pool.OwnerPools(make=lambda: pool))
    try:
        yield pool
    finally:
        pool.close()
