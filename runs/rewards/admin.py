"""Reward functions in the admin (a judge's and a reward model's params checked as the API checks them)."""
from django.contrib import admin

from runs.accounts.admin import OwnedAdmin
from runs.accounts import authoring
from runs.accounts.authoring_admin import AuthoringAdmin
from runs.rewards.admin_forms import RewardFunctionAdminForm
from runs.rewards.models.function import RewardFunction


@admin.register(RewardFunction)
class RewardFunctionAdmin(AuthoringAdmin, OwnedAdmin):
    form = RewardFunctionAdminForm  # a judge's API key: written, never shown (runs/rewards/admin_forms.py)
    authoring_refusal = staticmethod(authoring.reward_refusal)
    guarded_fields, guarded_on_add = ("kind", "source"), ("source",)
    list_display = ["name", "owner", "kind", "builtin", "api_key_status", "created_at"]
    list_filter = ["kind", "builtin"]
    search_fields = ["name"]
    readonly_fields = ["api_key_status"]

    @admin.display(description="API key")
    def api_key_status(self, reward):
        return "set" if reward.api_key_sealed else "not set"
