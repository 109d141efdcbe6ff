"""Evaluation outcomes in the admin."""
from django.contrib import admin
from django.utils.text import Truncator

from runs.accounts.admin import RunChildAdmin
from runs.evaluation.models import EvalOutcome


@admin.register(EvalOutcome)
class EvalOutcomeAdmin(RunChildAdmin):
    list_display = ["run", "step", "index", "key", "prompt_start", "passed", "samples", "score"]
    search_fields = ["prompt", "key"]

    @admin.display(description="prompt")
    def prompt_start(self, outcome):
        return Truncator(outcome.prompt).chars(80)
