"""The attack: give an account a password a guesser tries first (common, all digits, short, the
username), through the admin's forms or the first admin's ADMIN_PASSWORD. Each is refused with
the validators' own message, and nothing is saved."""
import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

pytestmark = pytest.mark.django_db

# Each passes Django's default length of 8 and was accepted before the validators were set.
WEAK = {
    "common": ("password1234", "This password is too common."),
    "numeric": ("20240101123456", "This password is entirely numeric."),
    "short": ("k7#pq-2xz", "This password is too short. It must contain at least 10 characters."),
    "username": ("newcomer-2", "The password is too similar to the username."),
}


@pytest.fixture
def admin_client(db):
    boss = get_user_model().objects.create_superuser("boss", password="boss-pass-123")
    client = Client()
    client.force_login(boss)
    return client


def errors_of(response) -> str:
    assert response.status_code == 200  # the form again, not a redirect to the saved object
    form = response.context["adminform"].form if "adminform" in response.context else response.context["form"]
    return " ".join(form.errors.get("password2", []))


@pytest.mark.parametrize("kind", WEAK)
def test_the_admin_refuses_a_new_user_with_a_weak_password(admin_client, kind):
    password, message = WEAK[kind]
    response = admin_client.post("/admin/auth/user/add/", {
        "username": "newcomer", "usable_password": "true", "password1": password, "password2": password})
    assert message in errors_of(response)
    assert not get_user_model().objects.filter(username="newcomer").exists()


@pytest.mark.parametrize("kind", WEAK)
def test_the_admin_refuses_to_set_a_weak_password(admin_client, kind):
    user = get_user_model().objects.create_user("newcomer", password="first-pass-4417")
    password, message = WEAK[kind]
    response = admin_client.post(f"/admin/auth/user/{user.pk}/password/", {
        "usable_password": "true", "password1": password, "password2": password})
    assert message in errors_of(response)
    user.refresh_from_db()
    assert user.check_password("first-pass-4417")


def test_a_weak_admin_password_stops_the_start_naming_the_variable(settings, tmp_path, monkeypatch):
    settings.DATA_DIR = tmp_path
    monkeypatch.setenv("ADMIN_USERNAME", "boss")
    monkeypatch.setenv("ADMIN_PASSWORD", "password1234")
    with pytest.raises(CommandError, match="ADMIN_PASSWORD is not acceptable: This password is too common"):
        call_command("ensure_admin")
    assert not get_user_model().objects.filter(username="boss").exists()
