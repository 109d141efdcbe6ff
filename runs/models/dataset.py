import hashlib
import json

from django.db import models, transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from runs.models.owned import OwnedModel


class Dataset(OwnedModel):
    class Source(models.TextChoices):
        UPLOAD = "upload", "Uploaded file"
        HUB = "hub", "Hub dataset"
        GENERATOR = "generator", "Built-in generator"
        # Made for a verifiers environment as it is saved (Environment.save): a worker takes the
        # rows from the environment, hub_id naming it and generator_params its arguments.
        ENVIRONMENT = "environment", "A verifiers environment's"

    class PromptFormat(models.TextChoices):
        TEXT = "text", "Plain text"
        CHAT = "chat", "Chat messages"

    name = models.CharField(max_length=200)
    source = models.CharField(max_length=20, choices=Source.choices)
    file = models.FileField(upload_to="datasets/%Y/%m/", blank=True)
    file_format = models.CharField(max_length=10, blank=True)
    # An upload's content, as a worker on another machine checks and caches what it fetches.
    sha256 = models.CharField(max_length=64, blank=True, editable=False)
    size_bytes = models.PositiveBigIntegerField(null=True, blank=True, editable=False)
    hub_id = models.CharField(max_length=300, blank=True)
    split = models.CharField(max_length=100, blank=True, default="train")
    generator = models.CharField(max_length=100, blank=True)
    generator_params = models.JSONField(default=dict, blank=True)
    prompt_column = models.CharField(max_length=200, default="prompt")
    prompt_format = models.CharField(max_length=10, choices=PromptFormat.choices, default=PromptFormat.TEXT)
    columns = models.JSONField(default=list, blank=True)
    # Null until validated: hub datasets are only loaded by a worker.
    row_count = models.PositiveBigIntegerField(null=True, blank=True)
    preview = models.JSONField(default=list, blank=True)

    class Meta(OwnedModel.Meta):
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="dataset_name_unique_per_owner")]

    def __str__(self):
        return self.name

    @property
    def is_validated(self) -> bool:
        return self.row_count is not None

    @classmethod
    def of_verifiers_environment(cls, owner, verifiers_id: str, params: dict) -> "Dataset":
        """The rows of the verifiers environment `verifiers_id` built with `params`: one dataset
        for the owner's environments that name it alike, made the first time."""
        for dataset in cls.objects.filter(owner=owner, source=cls.Source.ENVIRONMENT, hub_id=verifiers_id):
            if dataset.generator_params == params:
                return dataset
        digest = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:8]
        base = (verifiers_id + (f" {digest}" if params else ""))[:180]
        names = [f"{base} (verifiers)", *(f"{base} (verifiers {n})" for n in range(2, 100))]
        taken = set(cls.objects.filter(owner=owner, name__in=names).values_list("name", flat=True))
        return cls.objects.create(owner=owner, name=next(n for n in names if n not in taken),
                                  source=cls.Source.ENVIRONMENT, hub_id=verifiers_id, generator_params=params,
                                  prompt_column="prompt", prompt_format=cls.PromptFormat.CHAT)


@receiver(post_delete, sender=Dataset)
def remove_uploaded_file(sender, instance: Dataset, **kwargs):
    """An uploaded file goes with its dataset (also in cascades, which skip Model.delete).
    Only after the commit: a rolled-back delete keeps the row, which still needs its file."""
    if instance.file:
        storage, name = instance.file.storage, instance.file.name
        transaction.on_commit(lambda: storage.delete(name))
