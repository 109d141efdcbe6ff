"""Who may use a verifiers environment: the code authors, and everyone for the ids an operator lists
in VERIFIERS_ENVIRONMENTS_ALLOWED. The rule holds for creating and changing one, and at every run
start, where the run's owner must be one who may (a clone takes its new owner)."""
import pytest

from runs.training_runs.lifecycle import clone_run
from runs.environments.models.environment import Environment
from runs.training_runs.models import Run
from runs.accounts import authoring
from tests.support.reward_authors import grant_reward_authoring


@pytest.fixture
def installed(monkeypatch):
    monkeypatch.setattr("worker.trainer.environments.verifiers_check.installed", lambda module: True)


def create(client, verifiers_id: str, name: str = "vf"):
    return client.post("/api/environments/", {"name": name, "kind": "verifiers", "verifiers_id": verifiers_id},
                       format="json")


def test_an_allowed_id_needs_no_permission_and_others_still_do(owner_api, installed, settings):
    settings.VERIFIERS_ENVIRONMENTS_ALLOWED = ["vf-math"]
    assert create(owner_api, "vf-math").status_code == 201
    refused = create(owner_api, "vf-code", name="other")
    assert refused.status_code == 403 and "'vf-code'" in refused.json()["detail"]
    assert list(Environment.objects.values_list("verifiers_id", flat=True)) == ["vf-math"]


def test_an_allowed_environment_cannot_be_moved_to_an_id_not_allowed(owner_api, installed, settings):
    settings.VERIFIERS_ENVIRONMENTS_ALLOWED = ["vf-math"]
    environment = create(owner_api, "vf-math").json()
    response = owner_api.patch(f"/api/environments/{environment['id']}/", {"verifiers_id": "vf-code"}, format="json")
    assert response.status_code == 403
    assert Environment.objects.get().verifiers_id == "vf-math"


def test_the_form_says_which_ids_may_be_used_without_the_permission(logged_in, owner, settings):
    settings.VERIFIERS_ENVIRONMENTS_ALLOWED = ["vf-math", "vf-wordle"]
    html = logged_in.get("/environments/new/verifiers/").content.decode()
    assert "VERIFIERS_ENVIRONMENTS_ALLOWED (vf-math, vf-wordle)" in html
    grant_reward_authoring(owner)
    assert 'id="verifiers-permission"' not in logged_in.get("/environments/new/verifiers/").content.decode()


def verifiers_run(owner) -> Run:
    environment = Environment.objects.create(owner=owner, name="vf", kind="verifiers", verifiers_id="vf-math")
    return Run.objects.create(owner=owner, name="on vf", dataset=environment.dataset, environment=environment,
                              config={"model": "m"})


def test_a_clone_of_an_authors_run_does_not_start_for_a_staff_user_without_the_permission(owner, staff_user):
    run = verifiers_run(grant_reward_authoring(owner))
    assert authoring.run_refusal(owner, {}, run) is None
    clone = clone_run(run, owner=staff_user)
    with pytest.raises(authoring.NotPermitted, match=f"run {clone.pk} cannot start: .*runs.author_reward_code"):
        authoring.check_run_may_start(clone)


def test_an_allowed_id_lets_its_runs_start(owner, settings):
    run = verifiers_run(owner)
    with pytest.raises(authoring.NotPermitted):
        authoring.check_run_may_start(run)
    settings.VERIFIERS_ENVIRONMENTS_ALLOWED = ["vf-math"]
    authoring.check_run_may_start(run)


def test_a_verifiers_environment_the_user_may_not_change_is_shown_read_only(logged_in, owner, settings):
    environment = Environment.objects.create(owner=owner, name="vf", kind="verifiers", verifiers_id="vf-math")
    html = logged_in.get(f"/environments/{environment.pk}/").content.decode().replace("&#x27;", "'")
    assert 'id="code-refusal"' in html and "VERIFIERS_ENVIRONMENTS_ALLOWED" in html and 'id="env-save"' not in html
    settings.VERIFIERS_ENVIRONMENTS_ALLOWED = ["vf-math"]
    assert 'id="env-save"' in logged_in.get(f"/environments/{environment.pk}/").content.decode()
