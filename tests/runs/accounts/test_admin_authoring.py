"""The admin shows code fields read-only to staff without the code authors' permission, and lets
those who have it (superusers, the "Reward authors" group) write code as before."""
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from runs.rewards.models.function import RewardFunction
from tests.support.admin_forms import posted_as_shown
from tests.support.reward_authors import grant_reward_authoring

CODE = "def reward(prompts, completions, **columns):\n    return [1.0] * len(completions)\n"


@pytest.fixture
def staffer(db):
    user = get_user_model().objects.create_user("staffer", password="staffer-pass-123", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="runs",
                                                        codename__in=["change_rewardfunction", "add_rewardfunction",
                                                                      "view_rewardfunction"]))
    return user


def test_without_the_permission_kind_and_source_are_shown_read_only(client, staffer, reward):
    client.force_login(staffer)
    html = client.get(f"/admin/runs/rewardfunction/{reward.pk}/change/").content.decode()
    assert 'name="name"' in html and 'name="kind"' not in html and 'name="source"' not in html
    added = client.get("/admin/runs/rewardfunction/add/").content.decode()
    assert 'name="kind"' in added and 'name="source"' not in added


def test_without_the_permission_a_builtin_reward_is_still_edited(client, staffer, reward):
    client.force_login(staffer)
    url = f"/admin/runs/rewardfunction/{reward.pk}/change/"
    response = client.post(url, {**posted_as_shown(client.get(url)), "description": "checked"})
    assert response.status_code == 302
    assert RewardFunction.objects.get(pk=reward.pk).description == "checked"


@pytest.mark.parametrize("who", ["superuser", "author"])
def test_with_the_permission_a_builtin_reward_becomes_code(client, staffer, reward, who):
    user = (get_user_model().objects.create_superuser("root", password="root-pass-123") if who == "superuser"
            else grant_reward_authoring(staffer))
    client.force_login(user)
    url = f"/admin/runs/rewardfunction/{reward.pk}/change/"
    response = client.post(url, {**posted_as_shown(client.get(url)), "kind": "code", "source": CODE})
    assert response.status_code == 302
    saved = RewardFunction.objects.get(pk=reward.pk)
    assert (saved.kind, saved.source) == ("code", CODE.rstrip())  # the admin trims the text it takes
