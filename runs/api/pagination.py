"""Page-number pagination that refuses a page it cannot read.

DRF reads `page=` (empty) and `page_size=abc` as "the default", so a typo in a script silently
returns page 1; here a value that is not a positive whole number is a 400 naming the parameter.
A page past the end stays a 404, as DRF has it.
"""
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination


def _positive_or_400(request, name: str) -> int | None:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise ValidationError({name: [f"a whole number from 1, not {raw!r}"]})
    return int(raw)


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
