from django.db import models

from runs.accounts.models import OwnedModel
from runs.datasets.models import Dataset


class Environment(OwnedModel):
    """A dataset, how a rollout proceeds past the model's first answer, and the rubric (reward
    functions, weighted) that scores a finished episode. A run started on an environment trains
    on its dataset with its rubric (worker/trainer/environments/)."""

    class Kind(models.TextChoices):
        BUILTIN = "builtin", "Built-in"
        CODE = "code", "Python code"
        VERIFIERS = "verifiers", "verifiers environment"

    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    builtin = models.CharField(max_length=100, blank=True)
    params = models.JSONField(default=dict, blank=True)
    source = models.TextField(blank=True)
    verifiers_id = models.CharField(max_length=200, blank=True)
    dataset = models.ForeignKey("runs.Dataset", null=True, blank=True, on_delete=models.PROTECT,
                                related_name="environments",
                                help_text="The tasks; a verifiers environment's own (made as it is saved).")
    rubric = models.ManyToManyField("runs.RewardFunction", through="runs.EnvironmentReward", blank=True,
                                    related_name="environments")

    class Meta(OwnedModel.Meta):
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="environment_name_unique_per_owner")]

    def __str__(self):
        return self.name

    def save(self, *args, **kwargs):
        """A verifiers environment brings its rows: its dataset is the one that names it alike
        (Dataset.Source.ENVIRONMENT), made the first time."""
        if self.kind == self.Kind.VERIFIERS:
            self.dataset = Dataset.of_verifiers_environment(self.owner, self.verifiers_id, self.params or {})
        super().save(*args, **kwargs)

    def launch_spec(self) -> dict:
        return {"name": self.name, "kind": self.kind, "builtin": self.builtin or None, "params": self.params,
                "source": self.source or None, "verifiers_id": self.verifiers_id or None}


class EnvironmentReward(models.Model):
    environment = models.ForeignKey(Environment, on_delete=models.CASCADE, related_name="environment_rewards")
    reward_function = models.ForeignKey("runs.RewardFunction", on_delete=models.PROTECT,
                                        related_name="environment_rewards")
    weight = models.FloatField(default=1.0)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["environment", "reward_function"],
                                               name="rubric_reward_once")]
