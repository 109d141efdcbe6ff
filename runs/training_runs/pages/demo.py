"""The home page's demo buttons, one per demo (runs/demos/definitions.py): a real run on the CPU
demo setup, then its live page, with a message saying what to watch there."""
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect
from django.urls import path
from django.views.decorators.http import require_POST

from runs.demos.definitions import DEMOS
from runs.training_runs.demo_runs import start_demo_run


@login_required
@require_POST
def demo_run(request, key: str):
    demo = DEMOS.get(key)
    if demo is None:
        raise Http404(f"no demo {key!r}; the demos are: {', '.join(DEMOS)}")
    run = start_demo_run(request.user, key)
    messages.success(request, f"Started “{run.name}”. Watch: {demo.watch} The worker starts vLLM and the "
                              "trainer first (about half a minute), then the charts fill in.")
    return redirect("page-run", pk=run.pk)


urlpatterns = [path("runs/demo/<str:key>/", demo_run, name="page-run-demo")]
