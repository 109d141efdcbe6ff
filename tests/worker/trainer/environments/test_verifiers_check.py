"""A verifiers id is usable where the package and the environment's module are installed; otherwise
the reason says which is missing, and where."""
import pytest

from worker.trainer.environments import verifiers_check
from worker.trainer.environments.verifiers_check import module_name, verifiers_problem


def installed_only(*modules):
    return lambda module: module in modules


def test_without_the_package_the_reason_says_it_is_not_installed_there(monkeypatch):
    monkeypatch.setattr(verifiers_check, "installed", installed_only())
    problem = verifiers_problem("vf-math")
    assert "the verifiers package is not installed where the control plane runs" in problem
    assert "on this worker" in verifiers_problem("vf-math", where="on this worker")


def test_with_the_package_but_not_the_environment_the_module_is_named(monkeypatch):
    monkeypatch.setattr(verifiers_check, "installed", installed_only("verifiers"))
    assert "no module 'vf_math'" in verifiers_problem("vf-math")


def test_an_installed_environment_has_no_problem(monkeypatch):
    monkeypatch.setattr(verifiers_check, "installed", installed_only("verifiers", "vf_math"))
    assert verifiers_problem("someone/vf-math") is None


@pytest.mark.parametrize("verifiers_id", ["", "../x", "a/b/c", "vf math", "/abs"])
def test_what_is_not_an_id_is_refused_before_anything_is_imported(verifiers_id):
    assert "is not a verifiers environment id" in verifiers_problem(verifiers_id)


def test_the_module_of_an_id_is_its_last_part_with_underscores():
    assert module_name("owner/vf-word-count") == "vf_word_count"
