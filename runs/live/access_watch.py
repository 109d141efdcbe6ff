"""Tells a run's open sockets when their user may have lost the run, so they check at once.

Connected in RunsConfig.ready. A change through `QuerySet.update` or straight in the database
sends no signal: the consumer's own check every LIVE_ACCESS_RECHECK_S catches those.
"""
from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_out
from django.db.models.signals import post_delete, post_init, post_save

from runs.live.access import session_digest
from runs.live.events import ask_to_recheck_access, end_session_sockets
from runs.training_runs.models import Run


def connect_receivers() -> None:
    user_model = get_user_model()
    post_save.connect(_user_changed, sender=user_model, dispatch_uid="runs.live.access_watch.user_saved")
    post_delete.connect(_user_changed, sender=user_model, dispatch_uid="runs.live.access_watch.user_deleted")
    user_logged_out.connect(_logged_out, dispatch_uid="runs.live.access_watch.logged_out")
    post_init.connect(_remember_owner, sender=Run, dispatch_uid="runs.live.access_watch.run_loaded")
    post_save.connect(_run_saved, sender=Run, dispatch_uid="runs.live.access_watch.run_saved")
    post_delete.connect(_run_deleted, sender=Run, dispatch_uid="runs.live.access_watch.run_deleted")


def _user_changed(sender, instance, update_fields=None, created=False, **kwargs):
    # A login saves last_login alone, and a new user has no socket yet.
    if created or (update_fields is not None and set(update_fields) == {"last_login"}):
        return
    ask_to_recheck_access(user_id=instance.pk)


def _logged_out(sender, request, user, **kwargs):
    session_key = getattr(getattr(request, "session", None), "session_key", None)
    if user is not None and session_key:
        end_session_sockets(user.pk, session_digest(session_key))


def _remember_owner(sender, instance, **kwargs):
    # From __dict__: a deferred owner_id must not cost a query on every load.
    instance._owner_when_loaded = instance.__dict__.get("owner_id")


def _run_saved(sender, instance, created=False, **kwargs):
    loaded = getattr(instance, "_owner_when_loaded", None)
    if not created and loaded is not None and loaded != instance.owner_id:
        ask_to_recheck_access(run_id=instance.pk)
    instance._owner_when_loaded = instance.owner_id


def _run_deleted(sender, instance, **kwargs):
    ask_to_recheck_access(run_id=instance.pk)
