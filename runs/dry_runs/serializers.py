"""A queued dry run as the page and the API poll it, of a reward or of an environment: where to poll
it, how far it is in words, and its result when done. Each kind names its table, its fields and
the route of its status (runs/dry_runs/models.py)."""
from django.urls import reverse
from rest_framework import serializers


def progress_field(help_text: str) -> serializers.SerializerMethodField:
    return serializers.SerializerMethodField(help_text=help_text)


def result_field(help_text: str) -> serializers.JSONField:
    return serializers.JSONField(read_only=True, allow_null=True, help_text=help_text)


class DryRunStatus(serializers.ModelSerializer):
    """A kind sets `status_route` (the name of its status URL, by subject and dry run) and declares
    `progress` and `result` with its own words (progress_field, result_field)."""
    status_route: str
    url = serializers.SerializerMethodField(help_text="Where to poll it (GET).")

    def get_url(self, dry_run) -> str:
        return reverse(self.status_route, args=[dry_run.subject_id, dry_run.pk])

    def get_progress(self, dry_run) -> str:
        return dry_run.progress_text()
