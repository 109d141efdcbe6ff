from django.db import models

from runs.accounts.models import OwnedModel


class TrainingConfig(OwnedModel):
    """A named, reusable set of trainer knobs; `values` is always complete and valid
    under worker.trainer.config.TrainingConfig (the one schema)."""

    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    values = models.JSONField(default=dict)

    class Meta(OwnedModel.Meta):
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="config_name_unique_per_owner")]

    def __str__(self):
        return self.name
