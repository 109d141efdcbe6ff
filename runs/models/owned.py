"""Ownership: every user-facing object has an owner, and this is the one place that says who sees what."""
from django.conf import settings
from django.db import models
from django.shortcuts import get_object_or_404


class OwnedQuerySet(models.QuerySet):
    def visible_to(self, user):
        """Objects `user` may see: their own, everything for staff, nothing for anonymous users.

        Every list, detail, action, websocket and admin query goes through here, so
        another user's object is simply absent (a 404), never a 403 that leaks it exists.
        """
        if not user or not user.is_authenticated:
            return self.none()
        if user.is_staff:
            return self
        return self.filter(owner=user)

    def visible_or_404(self, user, pk):
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
