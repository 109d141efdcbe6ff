"""Runs: the list, the new-run form, the live run page and its buttons, the demo run."""
from runs.pages.watch import demo, new_run, run_actions, run_page, runs_list

urlpatterns = [
    *runs_list.urlpatterns, *new_run.urlpatterns, *demo.urlpatterns, *run_page.urlpatterns,
    *run_actions.urlpatterns,
]
