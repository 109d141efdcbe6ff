from django.db import models

from runs.accounts.models import OwnedModel
from runs.rewards.models.endpoint_hosts import host_listed


class RewardFunction(OwnedModel):
    class Kind(models.TextChoices):
        BUILTIN = "builtin", "Built-in"
        CODE = "code", "Python code"
        JUDGE = "judge", "LLM judge"
        REWARD_MODEL = "reward_model", "Reward model"

    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    builtin = models.CharField(max_length=100, blank=True)
    params = models.JSONField(default=dict, blank=True)
    source = models.TextField(blank=True)
    # A judge endpoint's API key, encrypted (runs/rewards/secrets.py); written once, never shown.
    api_key_sealed = models.TextField(blank=True, editable=False)

    class Meta(OwnedModel.Meta):
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="reward_name_unique_per_owner")]
        # Code runs (sandboxed) on the control plane and on workers, so writing it is granted
        # on purpose: superusers have it, others through the "Reward authors" group (admin).
        permissions = [("author_reward_code", "Can write and change reward functions made of Python code")]

    def __str__(self):
        return self.name

    VERIFIER_BUILTINS = ("accuracy", "exact_match")

    @property
    def is_verifier(self) -> bool:
        """Checked pass/fail, against which a judge's disagreement is measured."""
        return self.kind == self.Kind.BUILTIN and self.builtin in self.VERIFIER_BUILTINS

    def launch_spec(self, weight: float) -> dict:
        at_url = self.kind == self.Kind.JUDGE and self.params.get("endpoint") == "url"
        return {
            "name": self.name, "kind": self.kind, "weight": weight,
            "builtin": self.builtin or None, "params": self.params, "source": self.source or None,
            "verifier": self.is_verifier, "has_api_key": bool(self.api_key_sealed),
            # Listed by the operator: the worker lets its connections reach internal addresses.
            "internal_host_allowed": at_url and host_listed(str(self.params.get("base_url", ""))),
        }
