"""The control plane's sandbox pools by (requesting account, code owner): a key reuses its warm
process, keys never share one, and the warm pools are bounded (least recently used idle first,
idle ones after IDLE_S), none closed while a dry run uses it."""
import random
import threading
import time

import pytest

from runs.rewards.sandbox_pool import OwnerPools, SandboxKey
from tests.support.sandbox import TEST_LIMITS, call, reward_source
from worker.trainer.rewards.sandbox import SandboxPool

A, B, STAFF = 1, 2, 3


class FakePool:
    """Stands for a SandboxPool: only whether it was closed, and whether that happened in use."""

    def __init__(self):
        self.closed, self.in_use = False, 0

    def use(self):
        assert not self.closed, "a pool was closed while a dry run used it"
        self.in_use += 1
        time.sleep(random.random() / 200)
        assert not self.closed, "a pool was closed while a dry run used it"
        self.in_use -= 1

    def close(self):
        assert self.in_use == 0, "a pool was closed while a dry run used it"
        self.closed = True


@pytest.fixture
def fakes():
    pools = OwnerPools(make=FakePool, max_pools=2, idle_s=60.0)
    yield pools
    pools.close()


def test_one_key_reuses_its_warm_process():
    pools = OwnerPools(make=lambda: SandboxPool(size=2, limits=TEST_LIMITS))
    source = reward_source("return [1.0] * len(completions)")
    try:
        for _ in range(3):
            with pools.lease(SandboxKey(A, A)) as pool:
                assert call(pool, source).values == [1.0, 1.0]
        assert pool.processes_started == 1
    finally:
        pools.close()
    assert pool.closed


def test_each_pair_of_requester_and_code_owner_has_pools_of_its_own(fakes):
    keys = [SandboxKey(A, A), SandboxKey(B, B), SandboxKey(STAFF, B), SandboxKey(STAFF, STAFF)]
    fakes.max_pools = len(keys)
    seen = []
    for key in keys:
        with fakes.lease(key) as pool:
            seen.append(pool)
    assert len({id(pool) for pool in seen}) == len(keys)
    with fakes.lease(SandboxKey(STAFF, B)) as again:
        assert again is seen[2]


def test_past_the_bound_the_least_recently_used_idle_pool_is_closed(fakes):
    with fakes.lease(SandboxKey(A, A)) as first:
        pass
    with fakes.lease(SandboxKey(B, B)) as second:
        pass
    with fakes.lease(SandboxKey(A, A)):
        pass  # A's is now the most recent
    with fakes.lease(SandboxKey(STAFF, B)) as third:
        pass
    assert second.closed and not first.closed and not third.closed
    assert set(fakes.pools()) == {SandboxKey(A, A), SandboxKey(STAFF, B)}


def test_a_pool_in_use_is_not_closed_until_its_dry_run_ends(fakes):
    with fakes.lease(SandboxKey(A, A)) as busy:
        for owner in (B, STAFF, 4):
            with fakes.lease(SandboxKey(owner, owner)):
                pass
        assert not busy.closed
    with fakes.lease(SandboxKey(B, B)):
        pass
    assert busy.closed
    assert len(fakes.pools()) == 2


def test_an_idle_pool_is_closed_after_the_idle_time():
    pools = OwnerPools(make=FakePool, max_pools=4, idle_s=0.05)
    with pools.lease(SandboxKey(A, A)) as idle:
        pass
    time.sleep(0.1)
    with pools.lease(SandboxKey(B, B)):
        pass
    pools.close()
    assert idle.closed


def test_a_key_is_a_sandbox_key(fakes):
    with pytest.raises(TypeError, match="SandboxKey"):
        with fakes.lease((A, A)):
            pass


def test_many_threads_get_their_own_keys_pool_and_the_bound_holds_afterwards(fakes):
    keys = [SandboxKey(requester, owner) for requester in range(4) for owner in range(3)]
    mixed_up = []

    def dry_runs():
        for _ in range(40):
            key = random.choice(keys)
            with fakes.lease(key) as pool:
                pool.use()
                if getattr(pool, "key", key) != key:
                    mixed_up.append(key)
                pool.key = key

    threads = [threading.Thread(target=dry_runs) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert mixed_up == []
    assert len(fakes.pools()) <= fakes.max_pools
