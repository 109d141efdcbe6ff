"""Deleting a library object from its page: what uses it (runs, environments) keeps it, and the
page says what, instead of an error page."""
from django.contrib import messages
from django.db.models import ProtectedError
from django.shortcuts import redirect

from runs.web.errors import protected_message


def delete_unless_used(request, thing, label: str, edit_page: str, list_page: str):
    """Deletes `thing` and goes to its list; where something still uses it, back to its page."""
    try:
        thing.delete()
    except ProtectedError as exc:
        messages.error(request, f"{label} {thing.name!r} cannot be deleted: {protected_message(exc)}.")
        return redirect(edit_page, pk=thing.pk)
    messages.success(request, f"{label} {thing.name!r} deleted.")
    return redirect(list_page)
