"""The control plane's reward sandboxes: one small pool per (requesting account, code owner).

A warm process keeps whatever user code did to it (a builtin replaced, a module patched), so no
process serves two keys: account A's code could otherwise read the next source B dry-runs (its
secrets) or change B's scores, and staff dry-running B's code get a pool of that pair, never their
own. Within a key processes are reused (dry runs stay fast). Pools start empty (a process starts
on the first call); at most MAX_POOLS stay warm, the least recently used idle one closed first,
and one idle for IDLE_S is closed. A pool in use is never closed: while more keys than that are
in use at once, there are as many pools, until their dry runs end.
"""
import atexit
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from worker.trainer.for_control_plane.sandbox import SandboxLimits, SandboxPool

POOL_SIZE = 2
MAX_POOLS = 4
IDLE_S = 300.0
# A dry run is interactive: fail sooner than a run would, and keep the processes small.
DRY_RUN_LIMITS = SandboxLimits(call_timeout_s=5.0, load_timeout_s=30.0)


@dataclass(frozen=True)
class SandboxKey:
    """Whose processes: the account asking for the dry run and the account whose code runs (ids)."""
    requested_by: int
    code_owner: int


def make_pool() -> SandboxPool:
    return SandboxPool(size=POOL_SIZE, limits=DRY_RUN_LIMITS)


@dataclass
class _Entry:
    pool: SandboxPool
    leases: int = 0
    last_used: float = field(default_factory=time.monotonic)


class OwnerPools:
    """Pools by SandboxKey, thread-safe; `lease(key)` lends a key's pool for one dry run."""

    def __init__(self, make: Callable[[], SandboxPool] = make_pool, max_pools: int = MAX_POOLS,
                 idle_s: float = IDLE_S):
        self.make, self.max_pools, self.idle_s = make, max_pools, idle_s
        self._entries: OrderedDict[SandboxKey, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._sweeper: threading.Thread | None = None
        self.closed = False

    @contextmanager
    def lease(self, key: SandboxKey) -> Iterator[SandboxPool]:
        if not isinstance(key, SandboxKey):
            raise TypeError(f"a sandbox pool is lent by SandboxKey, not {type(key).__name__}")
        entry = self._take(key)
        try:
            yield entry.pool
        finally:
            self._give_back(entry)

    def pools(self) -> dict[SandboxKey, SandboxPool]:
        """The pools kept now, by key (to look at, not to call)."""
        with self._lock:
            return {key: entry.pool for key, entry in self._entries.items()}

    def _take(self, key: SandboxKey) -> _Entry:
        with self._lock:
            if self.closed:
                raise RuntimeError("the control plane's sandboxes are closed")
            entry = self._entries.get(key)
            if entry is None or entry.pool.closed:
                entry = self._entries[key] = _Entry(self.make())
            self._entries.move_to_end(key)
            entry.leases += 1
            closing = self._unwanted()
            self._start_sweeper()
        _close(closing)
        return entry

    def _give_back(self, entry: _Entry) -> None:
        with self._lock:
            entry.leases -= 1
            entry.last_used = time.monotonic()
            closing = self._unwanted()
        _close(closing)

    def _unwanted(self) -> list[SandboxPool]:
        """Takes out (lock held) the idle pools past IDLE_S, then the least recently used idle
        ones past MAX_POOLS; the caller closes them once the lock is released."""
        now, taken = time.monotonic(), []
        for key, entry in list(self._entries.items()):
            if entry.leases == 0 and (now - entry.last_used > self.idle_s or entry.pool.closed):
                taken.append(self._entries.pop(key).pool)
        for key, entry in list(self._entries.items()):  # oldest first
            if len(self._entries) <= self.max_pools:
                break
            if entry.leases == 0:
                taken.append(self._entries.pop(key).pool)
        return taken

    def _start_sweeper(self) -> None:
        if self._sweeper is None:
            self._sweeper = threading.Thread(target=self._sweep, name="sandbox-pools-sweeper", daemon=True)
            self._sweeper.start()

    def _sweep(self) -> None:
        """Closes idle pools even when no dry run comes to do it."""
        while not self.closed:
            time.sleep(min(self.idle_s, 60.0))
            with self._lock:
                closing = self._unwanted()
            _close(closing)

    def close(self) -> None:
        with self._lock:
            self.closed = True
            closing = [entry.pool for entry in self._entries.values()]
            self._entries.clear()
        _close(closing)


def _close(pools: list[SandboxPool]) -> None:
    for pool in pools:
        pool.close()


owner_pools = OwnerPools()
atexit.register(lambda: owner_pools.close())


def lease(key: SandboxKey):
    """The pool of `key` for one dry run: `with lease(SandboxKey(user.pk, reward.owner_id)) as pool:`."""
    return owner_pools.lease(key)
