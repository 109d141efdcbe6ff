"""The attack: guess a password by trying many, on the login page and on the admin's login.

After LOGIN_FAILURES_LIMIT wrong passwords for one username from one address, that pair is
refused for LOGIN_LOCKOUT_MINUTES with a 429 that says so, even with the right password; the
same user from another address, and other users, log in as before.
"""
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

pytestmark = pytest.mark.django_db

ATTACKER = "203.0.113.7"
ELSEWHERE = "198.51.100.9"
LOGINS = {"login page": "/login/", "admin login": "/admin/login/"}


@pytest.fixture
def victim(db):
    return get_user_model().objects.create_user("victim", password="victim-pass-123", is_staff=True)


def attempt(path: str, username: str, password: str, address: str = ATTACKER, **headers):
    return Client(REMOTE_ADDR=address).post(path, {"username": username, "password": password}, headers=headers)


def logged_in(response) -> bool:
    return response.status_code == 302 and "sessionid" in response.cookies


def guess_until_locked(path: str, username: str) -> None:
    for guess in range(settings.AXES_FAILURE_LIMIT):
        response = attempt(path, username, f"guess-{guess}")
        assert response.status_code in (200, 429) and not logged_in(response)


@pytest.mark.parametrize("path", LOGINS.values(), ids=LOGINS.keys())
def test_the_right_password_is_refused_after_too_many_wrong_ones(victim, path):
    guess_until_locked(path, "victim")
    response = attempt(path, "victim", "victim-pass-123")
    assert response.status_code == 429 and not logged_in(response)
    page = response.content.decode()
    assert "Too many failed logins" in page and "LOGIN_LOCKOUT_MINUTES" in page and "0:15:00" in page


def test_the_lock_answers_json_to_a_script(victim):
    guess_until_locked("/login/", "victim")
    response = attempt("/login/", "victim", "victim-pass-123", **{"X-Requested-With": "XMLHttpRequest"})
    assert response.status_code == 429
    assert response.json()["failure_limit"] == settings.AXES_FAILURE_LIMIT and response.json()["username"] == "victim"


def test_the_same_user_from_another_address_and_other_users_still_log_in(victim, owner):
    guess_until_locked("/login/", "victim")
    assert logged_in(attempt("/login/", "victim", "victim-pass-123", address=ELSEWHERE))
    assert logged_in(attempt("/login/", "owner", "owner-pass-123"))


def test_the_lock_ends_after_the_cool_off(victim):
    guess_until_locked("/login/", "victim")
    AccessAttempt.objects.update(attempt_time=timezone.now() - settings.AXES_COOLOFF_TIME - timedelta(seconds=1))
    assert logged_in(attempt("/login/", "victim", "victim-pass-123"))
