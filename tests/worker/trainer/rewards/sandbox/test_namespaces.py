"""The sandbox's own IPC namespace: a System V shared memory segment of this machine (PostgreSQL
keeps one) is out of reach, though the sandbox keeps the worker's uid that owns it."""
import ctypes

import pytest

from tests.support.sandbox import TEST_LIMITS, call, reward_source
from worker.trainer.rewards.sandbox import SandboxPool

IPC_CREAT, IPC_RMID = 0o1000, 0
LIBC = ctypes.CDLL(None, use_errno=True)


@pytest.fixture
def segment():
    key = 0x6770_6F00 + (id(object()) & 0xFF)
    shmid = LIBC.shmget(key, 4096, IPC_CREAT | 0o600)
    assert shmid >= 0, ctypes.get_errno()
    yield key
    LIBC.shmctl(shmid, IPC_RMID, None)


def test_a_system_v_segment_of_this_machine_is_out_of_reach(segment):
    with SandboxPool(size=1, limits=TEST_LIMITS) as pool:
        if "ipc" not in pool.confinement:
            pytest.skip(f"no IPC namespace here ({pool.confinement})")
        found = call(pool, reward_source(f"libc = ctypes.CDLL(None, use_errno=True)\n"
                                         f"print(libc.shmget({segment}, 0, 0), ctypes.get_errno())\n"
                                         "return [0.0, 0.0]", imports="import ctypes"))
    assert found.output == "-1 2\n"  # ENOENT: this namespace has no such segment
    assert LIBC.shmget(segment, 0, 0) >= 0  # while this machine's is still there
