"""Writing reward code is a permission of its own; built-ins and one's own rewards need none."""
import pytest
from django.contrib.auth import get_user_model

from runs.rewards.models.function import RewardFunction
from tests.support.reward_authors import grant_reward_authoring

CODE = "def reward(prompts, completions, **columns):\n    return [1.0] * len(completions)\n"


@pytest.fixture
def code_reward(owner):
    return RewardFunction.objects.create(owner=owner, name="mine", kind="code", source=CODE)


def test_without_the_permission_creating_code_is_403_with_what_to_do(owner_api):
    response = owner_api.post("/api/reward-functions/", {"name": "c", "kind": "code", "source": CODE}, format="json")
    assert response.status_code == 403
    detail = response.json()["detail"]
    assert "runs.author_reward_code" in detail and "Reward authors" in detail
    assert not RewardFunction.objects.filter(name="c").exists()


def test_without_the_permission_builtins_are_fine(owner_api):
    response = owner_api.post("/api/reward-functions/", {"name": "b", "kind": "builtin", "builtin": "length"},
                              format="json")
    assert response.status_code == 201, response.content


def test_without_the_permission_a_builtin_cannot_become_code(owner_api, reward):
    response = owner_api.patch(f"/api/reward-functions/{reward.pk}/", {"kind": "code", "source": CODE}, format="json")
    assert response.status_code == 403
    reward.refresh_from_db()
    assert reward.kind == "builtin"


@pytest.mark.parametrize("change", [{"source": CODE + "# changed\n"}, {"name": "renamed"},
                                    {"kind": "builtin", "builtin": "length"}])
def test_without_the_permission_existing_code_cannot_be_changed(owner_api, code_reward, change):
    response = owner_api.patch(f"/api/reward-functions/{code_reward.pk}/", change, format="json")
    assert response.status_code == 403
    code_reward.refresh_from_db()
    assert (code_reward.name, code_reward.source) == ("mine", CODE)


def test_without_the_permission_own_code_rewards_can_still_be_read_and_deleted(owner_api, code_reward):
    assert owner_api.get(f"/api/reward-functions/{code_reward.pk}/").json()["source"] == CODE
    assert owner_api.delete(f"/api/reward-functions/{code_reward.pk}/").status_code == 204


def test_the_reward_authors_group_grants_it(owner, owner_api):
    grant_reward_authoring(owner)
    response = owner_api.post("/api/reward-functions/", {"name": "c", "kind": "code", "source": CODE}, format="json")
    assert response.status_code == 201, response.content


def test_superusers_have_it(db):
    from tests.support.api_clients import api_client_for

    admin = get_user_model().objects.create_superuser("root", password="root-pass-123")
    response = api_client_for(admin).post("/api/reward-functions/", {"name": "c", "kind": "code", "source": CODE},
                                          format="json")
    assert response.status_code == 201, response.content


def test_staff_without_it_are_refused_like_anyone(staff_api):
    response = staff_api.post("/api/reward-functions/", {"name": "c", "kind": "code", "source": CODE}, format="json")
    assert response.status_code == 403


def test_someone_elses_code_reward_is_404_not_403(other_user, other_api, code_reward):
    grant_reward_authoring(other_user)
    response = other_api.patch(f"/api/reward-functions/{code_reward.pk}/", {"source": CODE}, format="json")
    assert response.status_code == 404


def test_the_first_admin_made_by_ensure_admin_may_author_code(db, settings, tmp_path, monkeypatch):
    from io import StringIO

    from django.core.management import call_command

    from runs.accounts.authoring import can_author_code

    monkeypatch.delenv("ADMIN_USERNAME", raising=False)
    monkeypatch.delenv("ADMIN_PASSWORD", raising=False)
    settings.DATA_DIR = tmp_path
    call_command("ensure_admin", stdout=StringIO())
    assert can_author_code(get_user_model().objects.get(username="admin"))


def test_the_reward_authors_group_exists_after_migrating_with_the_permission(db):
    from django.contrib.auth.models import Group

    group = Group.objects.get(name="Reward authors")
    assert list(group.permissions.values_list("content_type__app_label", "codename")) == [
        ("runs", "author_reward_code")]
