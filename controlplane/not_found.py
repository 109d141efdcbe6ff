"""A URL no route matches: JSON under /api/ (what API clients parse), Django's page elsewhere."""
from django.http import JsonResponse
from django.views.defaults import page_not_found


def not_found(request, exception=None):
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": f"no API endpoint at {request.path} (see /api/docs/ for the ones there are)"},
                            status=404)
    return page_not_found(request, exception)
