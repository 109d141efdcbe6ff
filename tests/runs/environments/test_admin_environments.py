"""The admin lists environments and edits one with its rubric inline."""
from django.contrib.auth import get_user_model


def test_an_environment_is_listed_and_its_rubric_shown_inline(client, calculator, reward):
    admin = get_user_model().objects.create_superuser("root", password="root-pass-123")
    client.force_login(admin)
    listing = client.get("/admin/runs/environment/").content.decode()
    assert "calc" in listing and "calculator" in listing
    page = client.get(f"/admin/runs/environment/{calculator.pk}/change/").content.decode()
    assert "environment_rewards-0-reward_function" in page and f'value="{reward.pk}"' in page
