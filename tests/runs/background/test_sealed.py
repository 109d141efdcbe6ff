"""Secrets sealed for a task's message (runs/background/sealed.py): they open for their purpose under
the key they were sealed with, within their age, and show nothing of themselves."""
import time

import pytest

from runs.background import sealed
from runs.background.sealed import Unsealable, seal, unseal

SECRET = "hf_secret_0123456789"


def test_a_sealed_secret_opens_for_its_purpose_and_does_not_show_itself():
    sealed_secret = seal(SECRET, "hub-push-token")
    assert SECRET not in sealed_secret and unseal(sealed_secret, "hub-push-token", max_age_s=60) == SECRET


def test_a_secret_sealed_for_another_purpose_does_not_open():
    with pytest.raises(Unsealable):
        unseal(seal(SECRET, "another-task"), "hub-push-token", max_age_s=60)


def test_a_secret_sealed_under_another_secret_key_does_not_open(settings):
    sealed_secret = seal(SECRET, "hub-push-token")
    settings.SECRET_KEY = "rotated-" + settings.SECRET_KEY
    with pytest.raises(Unsealable, match="SECRET_KEY changed"):
        unseal(sealed_secret, "hub-push-token", max_age_s=60)


def test_a_secret_older_than_its_max_age_does_not_open():
    two_hours_ago = int(time.time()) - 7200
    old = sealed.fernet_for("hub-push-token").encrypt_at_time(SECRET.encode(), two_hours_ago).decode()
    assert unseal(old, "hub-push-token", max_age_s=3 * 3600) == SECRET
    with pytest.raises(Unsealable, match="more than 1 h"):
        unseal(old, "hub-push-token", max_age_s=3600)
