"""Pages of a run's samples that cost the same at any depth: the page's ids first, then its rows.

`?page=10000` of a run with a million samples skips 999,900 rows. Skipped as whole rows (their
text included), PostgreSQL reads each from the table: over a second. Skipped as ids, both
databases walk the (run, step, group, id) index alone (runs/models/telemetry.py), then read the
page's 100 rows by id (bench/samples.py). The answer is the same page, as page numbers have it.
"""
from django.core.paginator import Paginator

from runs.api.pagination import TelemetryPagination


class IdsFirstPaginator(Paginator):
    def _get_page(self, object_list, number, paginator):
        ids = list(object_list.values_list("id", flat=True))
        rows = self.object_list.model._base_manager.in_bulk(ids)
        return super()._get_page([rows[pk] for pk in ids if pk in rows], number, paginator)


class SamplePagination(TelemetryPagination):
    django_paginator_class = IdsFirstPaginator
