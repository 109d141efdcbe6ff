"""What the API answers for a queued dry run, of a reward or of an environment: 202 with where to
poll it, and its status to the user who asked it (staff: any), a 404 to anyone else."""
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response


def queued(status_serializer, dry_run, context) -> Response:
    shown = status_serializer(dry_run, context=context).data
    return Response(shown, status=status.HTTP_202_ACCEPTED, headers={"Location": shown["url"]})


def asked_by(user, subject, dry_run_id):
    """The subject's dry run `dry_run_id` if `user` asked it or is staff; NotFound otherwise."""
    table = subject.dry_runs.model
    asked = subject.dry_runs.select_related(table.SUBJECT).filter(pk=dry_run_id)
    if not user.is_staff:
        asked = asked.filter(requested_by=user)
    if (shown := asked.first()) is None:
        raise NotFound(f"no dry run {dry_run_id} of this {table.SUBJECT} asked by you")
    return shown
