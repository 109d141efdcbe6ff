"""API errors as JSON with a reason, never an HTML traceback page."""
from django.db.models import ProtectedError
from rest_framework import status
from rest_framework.exceptions import APIException
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from runs.models import IllegalTransition


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The upload is too large."
    default_code = "too_large"


def exception_handler(exc, context):
    if isinstance(exc, IllegalTransition):
        return Response({"detail": str(exc), "status": exc.current}, status=status.HTTP_409_CONFLICT)
    if isinstance(exc, ProtectedError):
        users = sorted({str(obj) for obj in exc.protected_objects})[:5]
        return Response(
            {"detail": f"still used by: {', '.join(users)}; delete those first"}, status=status.HTTP_409_CONFLICT
        )
    return drf_exception_handler(exc, context)
