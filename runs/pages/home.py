"""Server-rendered pages. The dashboard grows here; the API is the source of the data."""
from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from runs.models import Run


@login_required
def home(request):
    recent = Run.objects.visible_to(request.user).select_related("dataset", "owner")[:20]
    return render(request, "runs/home.html", {"runs": recent})
