"""Which run a bearer token opens: one check for the views and for the request guard.

Workers call the ingest, checkpoint uploads and downloads, dataset downloads and the judges' keys
with their run's token. The request guard (runs/site/request_guard.py) asks the same questions
before it lets a body in, so both refuse the same tokens in the same words.
"""
from django.http import Http404
from rest_framework.exceptions import AuthenticationFailed

from runs.training_runs.models import Run

BEARER_REALM = 'Bearer realm="run-ingest"'
NO_BEARER = "send the run's ingest token as 'Authorization: Bearer <token>'"
WRONG_TOKEN_FOR_EVENTS = "this token is not valid for this run"
WRONG_TOKEN_FOR_FILES = "no run with this id for this token"
LARGEST_ID = 2 ** 63 - 1  # a bigger id in a URL is no run's


def bearer_of(authorization: str) -> str:
    """The token of an `Authorization: Bearer <token>` header; AuthenticationFailed otherwise."""
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthenticationFailed(NO_BEARER)
    return token.strip()


def run_of_bearer(run_id: int, authorization: str) -> Run | None:
    """Run `run_id` if the header carries its token; None for a wrong token and for an unknown
    run alike, so ids don't leak. The token of a run that ended is AuthenticationFailed, saying
    so: whoever holds it held it rightly once."""
    token = bearer_of(authorization)
    run = Run.objects.filter(pk=run_id).first() if 0 < run_id <= LARGEST_ID else None
    if run is None or not run.ingest_token_matches(token):
        return None
    if run.ingest_token_expired():
        raise AuthenticationFailed(run.expired_token_message())
    return run


def run_of_token(request, run_id: int) -> Run | None:
    """Run `run_id` if the request's bearer token is its own; None for a wrong token and for an
    unknown run alike; a 401 for the token of a run that ended (run_of_bearer)."""
    return run_of_bearer(run_id, request.META.get("HTTP_AUTHORIZATION", ""))


def run_for_token(request, run_id: int) -> Run:
    """The run this token belongs to, if it is run `run_id`; else Http404 (files, unlike events,
    are answered as not found). The token of a run that ended is a 401 that says so."""
    run = run_of_token(request, run_id)
    if run is None:
        raise Http404(WRONG_TOKEN_FOR_FILES)
    return run
