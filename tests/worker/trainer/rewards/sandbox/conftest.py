import pytest

from tests.support.sandbox import TEST_LIMITS
from worker.trainer.rewards.sandbox import SandboxPool


@pytest.fixture(scope="module")
def pool():
    with SandboxPool(size=1, limits=TEST_LIMITS) as shared:
        yield shared
