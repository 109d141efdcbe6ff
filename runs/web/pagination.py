"""Page-number pagination that refuses a page it cannot read.

DRF reads `page=` (empty) and `page_size=abc` as "the default", so a typo in a script silently
returns page 1; here a value that is not a positive whole number (in ASCII digits) is a 400
naming the parameter. A page past the end stays a 404, as DRF has it, however many digits it
has: a number longer than LONGEST_NUMBER digits is read as BEYOND_ANY_PAGE, never converted
(Python refuses to turn more than 4300 digits into an int).
"""
import re

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination

WHOLE_NUMBER = re.compile(r"[0-9]+", re.ASCII)
LONGEST_NUMBER = 18
BEYOND_ANY_PAGE = 10 ** LONGEST_NUMBER


def _positive_or_400(request, name: str) -> int | None:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    significant = raw.lstrip("0")
    if not WHOLE_NUMBER.fullmatch(raw) or not significant:
        shown = raw if len(raw) <= 40 else raw[:40] + "..."
        raise ValidationError({name: [f"a whole number from 1, not {shown!r}"]})
    return int(significant) if len(significant) <= LONGEST_NUMBER else BEYOND_ANY_PAGE


class StrictPageNumberPagination(PageNumberPagination):
    def get_page_number(self, request, paginator):
        return _positive_or_400(request, self.page_query_param) or 1

    def get_page_size(self, request):
        if self.page_size_query_param and (size := _positive_or_400(request, self.page_size_query_param)):
            return min(size, self.max_page_size) if self.max_page_size else size
        return self.page_size

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"]["minimum"] = 1
        return parameters


class TelemetryPagination(StrictPageNumberPagination):
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000
