"""WORKER_RAY_ADDRESS, WORKER_RAY_PLACE_TIMEOUT_S and WORKER_RAY_ALLOW_OPEN_CLUSTER: unset is today's
single machine, and a cluster that lets anyone in is refused; a bad value stops the worker naming
the variable."""
import pytest

from worker.settings import WorkerSettings, WorkerSettingsError


def test_a_worker_without_a_ray_address_runs_runs_on_its_own_machine(monkeypatch):
    monkeypatch.delenv("WORKER_RAY_ADDRESS", raising=False)
    monkeypatch.delenv("WORKER_RAY_PLACE_TIMEOUT_S", raising=False)
    monkeypatch.delenv("WORKER_RAY_ALLOW_OPEN_CLUSTER", raising=False)
    settings = WorkerSettings.from_env()
    assert settings.ray_address is None and settings.ray_place_timeout_s == 600.0
    assert settings.ray_allow_open_cluster is False


@pytest.mark.parametrize("value, allowed", [("1", True), ("true", True), ("0", False), ("", False)])
def test_an_open_cluster_is_allowed_only_when_the_worker_says_so(monkeypatch, value, allowed):
    monkeypatch.setenv("WORKER_RAY_ALLOW_OPEN_CLUSTER", value)
    assert WorkerSettings.from_env().ray_allow_open_cluster is allowed


@pytest.mark.parametrize("address", ["auto", "10.0.0.5:6379", "ray-head.lab:6390"])
def test_a_ray_address_is_taken_as_given(monkeypatch, address):
    monkeypatch.setenv("WORKER_RAY_ADDRESS", address)
    monkeypatch.setenv("WORKER_RAY_PLACE_TIMEOUT_S", "30")
    settings = WorkerSettings.from_env()
    assert (settings.ray_address, settings.ray_place_timeout_s) == (address, 30.0)


@pytest.mark.parametrize("variable, value", [("WORKER_RAY_ADDRESS", "10.0.0.5"), ("WORKER_RAY_ADDRESS", ":6379"),
                                             ("WORKER_RAY_PLACE_TIMEOUT_S", "soon"),
                                             ("WORKER_RAY_PLACE_TIMEOUT_S", "0"),
                                             ("WORKER_RAY_ALLOW_OPEN_CLUSTER", "maybe")])
def test_a_bad_ray_setting_is_refused_naming_the_variable(monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    with pytest.raises(WorkerSettingsError, match=variable):
        WorkerSettings.from_env()
