from django.db import models, transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from runs.models.owned import OwnedModel


class Dataset(OwnedModel):
    class Source(models.TextChoices):
        UPLOAD = "upload", "Uploaded file"
        HUB = "hub", "Hub dataset"
        GENERATOR = "generator", "Built-in generator"

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


@receiver(post_delete, sender=Dataset)
def remove_uploaded_file(sender, instance: Dataset, **kwargs):
    """An uploaded file goes with its dataset (also in cascades, which skip Model.delete).
    Only after the commit: a rolled-back delete keeps the row, which still needs its file."""
    if instance.file:
        storage, name = instance.file.storage, instance.file.name
        transaction.on_commit(lambda: storage.delete(name))
