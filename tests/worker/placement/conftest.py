"""Every process these tests start joins their clusters as the worker would: with the token the
clusters ask for (tests/support/ray_cluster.py), from the environment it inherits."""
import pytest

from tests.support.ray_cluster import TOKEN_AUTH, TWO_NODES, start_ray_cluster


@pytest.fixture(scope="package", autouse=True)
def ray_token_in_the_environment():
    with pytest.MonkeyPatch.context() as env:
        for name, value in TOKEN_AUTH.items():
            env.setenv(name, value)
        yield


@pytest.fixture(scope="package")
def cluster(ray_token_in_the_environment):
    """node-a, the head, with nothing to give, and node-b with 1 CPU and 1 declared GPU."""
    cluster = start_ray_cluster(TWO_NODES, unset=("OMP_NUM_THREADS",))
    yield cluster
    cluster.stop()


@pytest.fixture(scope="package")
def open_cluster(ray_token_in_the_environment):
    """One node of 1 CPU that asks no token of anyone."""
    cluster = start_ray_cluster(((1, 0),), open_door=True)
    yield cluster
    cluster.stop()


@pytest.fixture
def joining_the_open_cluster(open_cluster, monkeypatch):
    """The environment of a worker set up for the open cluster: no token."""
    monkeypatch.delenv("RAY_AUTH_TOKEN")
    for name, value in open_cluster.client_env.items():
        monkeypatch.setenv(name, value)
    return open_cluster
