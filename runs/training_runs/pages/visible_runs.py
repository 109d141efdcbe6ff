"""The run a page or a page's button is about, if the user may see it: a 404 otherwise. Runs lost
meanwhile are marked so on read, as the API's detail does."""
from runs.telemetry.liveness import mark_lost_runs
from runs.training_runs.models import Run


def visible_run(request, pk: int) -> Run:
    mark_lost_runs(Run.objects.visible_to(request.user).filter(pk=pk))  # "on read", like the API's detail
    return Run.objects.select_related("dataset", "owner", "config_template").visible_or_404(request.user, pk)
