"""An endpoint judge calls public hosts only, unless an operator lists the host: no user makes the
control plane or a worker send requests to the database, Redis or a cloud's metadata service."""
import pytest

from runs.rewards.models.function import RewardFunction
from runs.rewards.models.endpoint_hosts import endpoint_problem


@pytest.fixture
def nothing_listed(settings):
    settings.JUDGE_ENDPOINT_HOSTS = []


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:5432/v1", "http://localhost:6379/v1", "http://169.254.169.254/latest/v1",
    "http://10.0.0.7/v1", "http://[::1]:8000/v1", "http://[::ffff:127.0.0.1]/v1", "http://0.0.0.0:8000/v1",
    "http://100.64.0.1/v1",
])
def test_an_internal_address_is_refused_naming_the_setting_that_allows_it(nothing_listed, url):
    problem = endpoint_problem(url)
    assert problem.startswith("base_url: host ") and "internal address" in problem
    assert "JUDGE_ENDPOINT_HOSTS" in problem


def test_a_public_address_is_let_through(nothing_listed):
    assert endpoint_problem("https://8.8.8.8/v1") is None


def test_a_host_the_operator_lists_is_let_through(settings):
    settings.JUDGE_ENDPOINT_HOSTS = ["judge.lab.internal", "10.0.0.7"]
    assert endpoint_problem("http://10.0.0.7:8000/v1") is None
    assert endpoint_problem("http://127.0.0.1:8000/v1") is not None


def test_a_star_lists_every_host(settings):
    settings.JUDGE_ENDPOINT_HOSTS = ["*"]
    assert endpoint_problem("http://127.0.0.1:8000/v1") is None


def test_a_host_that_does_not_resolve_is_saved_but_not_called(nothing_listed):
    url = "https://judge.invalid/v1"
    assert endpoint_problem(url) is None
    refused = endpoint_problem(url, must_resolve=True)
    assert refused == "base_url: host 'judge.invalid' does not resolve from the control plane"


def test_the_api_refuses_a_judge_aimed_at_the_metadata_service(nothing_listed, owner_api):
    response = owner_api.post("/api/reward-functions/", {
        "name": "sneaky", "kind": "judge",
        "params": {"template": "{completion}", "endpoint": "url", "base_url": "http://169.254.169.254/v1",
                   "model": "m"}}, format="json")
    assert response.status_code == 400
    assert "169.254.169.254" in str(response.json()["params"])


@pytest.mark.parametrize("listed, allowed", [([], False), (["judge.lab.internal"], True), (["*"], True)])
def test_the_run_spec_tells_the_worker_whether_an_endpoint_judges_host_is_listed(settings, owner, listed, allowed):
    """The worker checks each connection's address (DNS rebinding) unless the operator listed the host."""
    settings.JUDGE_ENDPOINT_HOSTS = listed
    judge = RewardFunction(owner=owner, name="lab judge", kind="judge", params={
        "template": "{completion}", "endpoint": "url", "base_url": "http://judge.lab.internal:8000/v1", "model": "m"})
    assert judge.launch_spec(1.0)["internal_host_allowed"] is allowed


def test_a_served_judge_is_never_marked_as_allowed_an_internal_host(settings, owner):
    settings.JUDGE_ENDPOINT_HOSTS = ["*"]
    judge = RewardFunction(owner=owner, name="served", kind="judge", params={"template": "{completion}", "model": "m"})
    assert judge.launch_spec(1.0)["internal_host_allowed"] is False
