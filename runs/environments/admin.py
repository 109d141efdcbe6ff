"""Environments in the admin, with their rubric."""
from django.contrib import admin

from runs.accounts.admin import OwnedAdmin
from runs.accounts import authoring
from runs.accounts.authoring_admin import AuthoringAdmin
from runs.environments.models.environment import Environment, EnvironmentReward


class EnvironmentRewardInline(admin.TabularInline):
    """The rubric: the reward functions, weighted, that score a finished episode."""
    model = EnvironmentReward
    extra = 0
    autocomplete_fields = ["reward_function"]


@admin.register(Environment)
class EnvironmentAdmin(AuthoringAdmin, OwnedAdmin):
    authoring_refusal = staticmethod(authoring.environment_refusal)
    guarded_fields, guarded_on_add = ("kind", "source", "verifiers_id"), ("source",)
    list_display = ["name", "owner", "kind", "builtin", "verifiers_id", "dataset", "created_at"]
    list_filter = ["kind", "builtin"]
    search_fields = ["name", "verifiers_id"]
    list_select_related = ["owner", "dataset"]
    inlines = [EnvironmentRewardInline]
