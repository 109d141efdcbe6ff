"""A judge's API key at rest: sealed under a key of its own purpose, opened only under the same
SECRET_KEY, and shown in logs at most as its last characters."""
import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured

from runs.background.sealed import Unsealable, seal, unseal
from runs.rewards.secrets import KeyUnreadable, seal_api_key, unseal_api_key

KEY = "sk-proj-0123456789abcdefghij"


def test_a_sealed_key_opens_again_and_does_not_hold_it_in_clear():
    sealed = seal_api_key(KEY)
    assert KEY not in sealed and unseal_api_key(sealed) == KEY
    assert seal_api_key(KEY) != sealed  # a fresh IV each time: equal keys do not look equal at rest


def test_a_key_sealed_for_another_purpose_does_not_open_here_nor_the_other_way():
    with pytest.raises(KeyUnreadable):
        unseal_api_key(seal(KEY, "hub-push"))
    with pytest.raises(Unsealable):
        unseal(seal_api_key(KEY), "hub-push", max_age_s=3600)


def test_after_secret_key_changes_the_key_is_unreadable_saying_to_set_it_again(settings):
    sealed = seal_api_key(KEY)
    settings.SECRET_KEY = "another-" + settings.SECRET_KEY
    with pytest.raises(KeyUnreadable, match="set the reward's API key again"):
        unseal_api_key(sealed)


def test_an_empty_key_is_not_sealed():
    with pytest.raises(ValueError, match="empty"):
        seal_api_key("")



def test_an_operators_own_key_seals_them_and_survives_a_new_secret_key(settings):
    settings.SECRETS_ENCRYPTION_KEY = Fernet.generate_key().decode()
    sealed = seal_api_key(KEY)
    settings.SECRET_KEY = "another-" + settings.SECRET_KEY
    assert unseal_api_key(sealed) == KEY


def test_an_own_key_that_is_no_fernet_key_is_refused_naming_the_setting(settings):
    settings.SECRETS_ENCRYPTION_KEY = "hunter2"
    with pytest.raises(ImproperlyConfigured, match="SECRETS_ENCRYPTION_KEY must be a Fernet key"):
        seal_api_key(KEY)
