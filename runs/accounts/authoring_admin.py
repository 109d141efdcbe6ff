"""The admin holds the code authors' permission as the API and the pages do (runs/accounts/authoring.py).

A staff user without it sees the fields that hold code, or would turn a built-in into code or a
verifiers environment, read-only; and since a crafted POST could still carry them (Django would
silently drop a read-only field), a form that receives one refuses the whole save with the reason.
"""
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from django import forms
from django.contrib import admin
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import ValidationError

from runs.accounts import authoring

if TYPE_CHECKING:
    _ModelAdmin = admin.ModelAdmin[Any]  # what the mixin goes before
else:
    _ModelAdmin = object

Refusal = Callable[[Any, Any, Any], str | None]  # (user, data, instance): why the save is refused, or None


class AuthoringAdminForm(forms.ModelForm):
    author: User | AnonymousUser | None = None  # the request's user (AuthoringAdmin.get_form)
    guarded: tuple[str, ...] = ()  # shown read-only to that user, so never posted by this form
    refusal_of: Refusal = staticmethod(lambda user, data, instance: None)

    def clean(self):
        cleaned = super().clean()
        instance = self.instance if self.instance.pk is not None else None
        refusal = self.refusal_of(self.author, cleaned, instance)
        posted = [field for field in self.guarded if field in self.data]
        if posted:
            raise ValidationError(f"{', '.join(posted)} not changed: "
                                  + (refusal or authoring.refusal(f"the fields {', '.join(posted)}")))
        if refusal:
            raise ValidationError(refusal)
        return cleaned


class AuthoringAdmin(_ModelAdmin):
    """A ModelAdmin mixin. `authoring_refusal(user, data, instance)` says why a save is refused;
    `guarded_fields` are read-only to non-authors on a change (`guarded_on_add` on an add), and
    an object they may not save at all (code, say) is read-only whole."""
    form = AuthoringAdminForm
    authoring_refusal: Refusal = staticmethod(lambda user, data, instance: None)
    guarded_fields: tuple[str, ...] = ()
    guarded_on_add: tuple[str, ...] = ()

    def get_readonly_fields(self, request, obj=None):
        shown = list(super().get_readonly_fields(request, obj))
        return shown + [field for field in self._guarded(request, obj) if field not in shown]

    def _guarded(self, request, obj) -> list[str]:
        if authoring.can_author_code(request.user):
            return []
        if obj is None:
            return list(self.guarded_on_add)
        if self.authoring_refusal(request.user, {}, obj):
            return [f.name for f in self.model._meta.fields if f.editable and not f.primary_key]
        return list(self.guarded_fields)

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = cast(type[AuthoringAdminForm], super().get_form(request, obj, change=change, **kwargs))
        form.author = request.user
        form.guarded = tuple(self._guarded(request, obj))
        form.refusal_of = staticmethod(self.authoring_refusal)
        return form
