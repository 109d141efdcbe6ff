"""Giving a test user the permission to author reward code, the way an administrator would."""
from django.contrib.auth.models import Group

from runs.accounts.authoring import AUTHORS_GROUP


def grant_reward_authoring(user):
    user.groups.add(Group.objects.get(name=AUTHORS_GROUP))
    # Django caches permissions on the user object; the API client holds this same object.
    for cache in ("_perm_cache", "_group_perm_cache", "_user_perm_cache"):
        user.__dict__.pop(cache, None)
    return user
