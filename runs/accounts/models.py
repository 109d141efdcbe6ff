"""Ownership: every user-facing object has an owner, and this is the one place that says who sees what."""
from typing import Self, TypeVar

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db import models
from django.shortcuts import get_object_or_404


class OwnedQuerySet(models.QuerySet):
    def visible_to(self, user: User | AnonymousUser | None) -> Self:
        """Objects `user` may see: their own, everything for staff, nothing for anonymous users.

        Every list, detail, action, websocket and admin query goes through here, so
        another user's object is simply absent (a 404), never a 403 that leaks it exists.
        """
        if not user or not user.is_authenticated:
            return self.none()
        if user.is_staff:
            return self
        return self.filter(owner=user)

    def visible_or_404(self: "OwnedQuerySet[_Owned, _Owned]", user: User | AnonymousUser | None,
                       pk: object) -> "_Owned":
        """The object `pk` if `user` may see it; a 404 otherwise (also for someone else's)."""
        return get_object_or_404(self.visible_to(user), pk=pk)


class OwnedModel(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = OwnedQuerySet.as_manager()

    class Meta:
        abstract = True
        ordering = ["-created_at"]


# After the class it is bound to: a forward reference here would make Django's mypy plugin
# type `objects` on any `type[_Owned]` as OwnedModel's, not as `_Owned`'s.
_Owned = TypeVar("_Owned", bound=OwnedModel)
