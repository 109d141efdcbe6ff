"""API errors as JSON with a reason, never an HTML traceback page."""
from contextlib import contextmanager

from django.db import IntegrityError
from django.db.models import ProtectedError
from pydantic import ValidationError as SchemaError
from rest_framework import status
from rest_framework.exceptions import APIException
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from runs.accounts.upload_quota import UploadQuotaExceeded
from runs.background.limits import UnfinishedLimitReached
from runs.environments.models.environment import Environment, EnvironmentReward
from runs.training_runs.models import IllegalTransition, Run, RunReward


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The upload is too large."
    default_code = "too_large"


# What the schema says of the refusals below, for the routes that can give them.
TOO_MUCH_UNFINISHED = (
    "This account has as much of this background work queued or running as it may have at once: `detail` says "
    "so, with `limit`, `unfinished` (the count) and `setting` (the operator's setting that changes the limit). "
    "Nothing was stored; ask again once one has finished.")
PAST_UPLOAD_QUOTA = ("The upload would take this account's uploaded datasets past UPLOAD_QUOTA_PER_ACCOUNT_MB; "
                     "`detail` says how much is used of how much. Nothing was stored.")


class NotLaunchable(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "This run cannot be launched as stored."
    default_code = "not_launchable"


@contextmanager
def launch_checked():
    """Starting re-validates the run's parts into a launch spec. A run stored outside the API
    (admin, an older schema) can fail there: a conflict with the run's state, not a server error."""
    try:
        yield
    except SchemaError as exc:
        problems = [f"{'.'.join(map(str, e['loc'])) or 'spec'}: {e['msg']}" for e in exc.errors()[:10]]
        raise NotLaunchable({"detail": "this run cannot be launched as stored; clone it and fix: "
                                       + "; ".join(problems), "errors": problems}) from None


def exception_handler(exc, context):
    if isinstance(exc, IllegalTransition):
        return Response({"detail": str(exc), "status": exc.current}, status=status.HTTP_409_CONFLICT)
    if isinstance(exc, ProtectedError):
        return Response({"detail": protected_message(exc)}, status=status.HTTP_409_CONFLICT)
    if isinstance(exc, UnfinishedLimitReached):
        return Response(exc.as_json(), status=status.HTTP_429_TOO_MANY_REQUESTS)
    if isinstance(exc, UploadQuotaExceeded):
        return Response({"detail": str(exc), "setting": "UPLOAD_QUOTA_PER_ACCOUNT_MB"},
                        status=status.HTTP_507_INSUFFICIENT_STORAGE)
    if isinstance(exc, IntegrityError):
        # Serializers check names first; this is the race where two saves pass that check at once.
        return Response({"detail": "this conflicts with an object saved at the same moment (such as one with the "
                                   "same name); reload and try again"}, status=status.HTTP_409_CONFLICT)
    return drf_exception_handler(exc, context)


def protected_message(exc: ProtectedError, shown: int = 5) -> str:
    """Names what holds the object. A reward is held by a run's RunReward row (or an environment's
    rubric row): the run (environment) is named, as that is what a person can delete, read by id
    because it may be mid-delete itself."""
    protected = list(exc.protected_objects)
    run_ids = {obj.run_id for obj in protected if isinstance(obj, RunReward)}
    environment_ids = {obj.environment_id for obj in protected if isinstance(obj, EnvironmentReward)}
    rows = (RunReward, EnvironmentReward)
    holders = sorted({f"run {run}" for run in Run.objects.filter(pk__in=run_ids)} |
                     {f"environment {env}" for env in Environment.objects.filter(pk__in=environment_ids)} |
                     {f"{obj._meta.verbose_name} {obj}" for obj in protected if not isinstance(obj, rows)})
    if not holders:
        return "still used by runs that are being deleted; try again in a moment"
    more = f" and {len(holders) - shown} more" if len(holders) > shown else ""
    return f"still used by {', '.join(holders[:shown])}{more}; delete those first"
