"""The web server's reward sandbox: a small pool, started on the first dry run of code, closed at exit."""
import atexit
import threading

from worker.trainer.for_control_plane.sandbox import SandboxLimits, SandboxPool

POOL_SIZE = 2
# A dry run is interactive: fail sooner than a run would, and keep the processes small.
DRY_RUN_LIMITS = SandboxLimits(call_timeout_s=5.0, load_timeout_s=30.0)

_pool: SandboxPool | None = None
_lock = threading.Lock()


def shared_pool() -> SandboxPool:
    global _pool
    with _lock:
        if _pool is None or _pool.closed:
            _pool = SandboxPool(size=POOL_SIZE, limits=DRY_RUN_LIMITS)
            atexit.register(_pool.close)
        return _pool
