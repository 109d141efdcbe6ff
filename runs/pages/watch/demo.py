"""The home page's "demo run" button: a real run on the CPU demo setup, then its live page."""
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect
from django.urls import path
from django.views.decorators.http import require_POST

from runs.actions.demo import start_demo_run


@login_required
@require_POST
def demo_run(request):
    run = start_demo_run(request.user)
    messages.success(request, f"Started “{run.name}”: the worker starts vLLM and the trainer (about half a minute), "
                              "then the charts fill in.")
    return redirect("page-run", pk=run.pk)


urlpatterns = [path("runs/demo/", demo_run, name="page-run-demo")]
