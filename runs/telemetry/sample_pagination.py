"""Pages of a run's samples that cost the same at any depth: the page's ids first, then its rows.

`?page=10000` of a run with a million samples skips 999,900 rows. Skipped as whole rows (their
text included), PostgreSQL reads each from the table: over a second. Skipped as ids, both
databases walk the (run, step, group, id) index alone (runs/telemetry/models.py), then read the
page's 100 rows by id (bench/samples.py: 4-12x faster at a million). The answer is the same page.
"""
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import QuerySet

from runs.web.pagination import TelemetryPagination


class IdsFirstPaginator(Paginator):
    # Above this many rows skipped; a shallower page (a step's, the first ones) is cheaper read in
    # one query than in two (bench/samples.py: a whole step of 1,000 took a third longer).
    deep_from = 10_000

    # Django's stubs leave out Paginator._get_page, which page() makes its Page with.
    def _get_page(self, object_list: QuerySet[Any], number: int, paginator: Paginator) -> Page:
        if object_list.query.low_mark < self.deep_from:
            return super()._get_page(object_list, number, paginator)  # type: ignore[misc]  # not in the stubs
        ids = list(object_list.values_list("id", flat=True))
        rows = object_list.model._base_manager.in_bulk(ids)
        page = [rows[pk] for pk in ids if pk in rows]
        return super()._get_page(page, number, paginator)  # type: ignore[misc]  # not in the stubs


class SamplePagination(TelemetryPagination):
    django_paginator_class = IdsFirstPaginator
