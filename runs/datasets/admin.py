"""Datasets in the admin."""
from django.contrib import admin

from runs.accounts.admin import OwnedAdmin
from runs.accounts import authoring
from runs.accounts.authoring_admin import AuthoringAdmin
from runs.datasets.models import Dataset


@admin.register(Dataset)
class DatasetAdmin(AuthoringAdmin, OwnedAdmin):
    # A verifiers environment's rows are loaded by running it (source environment).
    authoring_refusal = staticmethod(authoring.dataset_refusal)
    guarded_fields = ("source", "hub_id", "generator_params")
    list_display = ["name", "owner", "source", "prompt_column", "prompt_format", "row_count", "created_at"]
    list_filter = ["source", "prompt_format"]
    search_fields = ["name", "hub_id", "generator"]
    readonly_fields = ["columns", "row_count", "preview", "prompt_format", "file_format"]
