"""The pages, domain by domain: each page module holds its own URL list."""
from django.urls import path

from runs.compare import page as compare_page
from runs.configs import pages as config_pages
from runs.datasets import pages as dataset_pages
from runs.training_runs.pages import demo as demo_pages
from runs.environments import pages as environment_pages
from runs.fleet import page as workers_page
from runs.rewards import pages as reward_pages
from runs.site import home
from runs.training_runs.pages import new_run, run_actions, run_page, runs_list

urlpatterns = [
    path("", home.home, name="home"),
    *dataset_pages.urlpatterns, *reward_pages.urlpatterns, *environment_pages.urlpatterns, *config_pages.urlpatterns,
    *runs_list.urlpatterns, *new_run.urlpatterns, *demo_pages.urlpatterns, *run_page.urlpatterns,
    *run_actions.urlpatterns,
    *compare_page.urlpatterns,
    *workers_page.urlpatterns,
]
