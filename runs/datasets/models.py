import hashlib
import json
from datetime import timedelta

from django.db import models, transaction
from django.db.models import Sum
from django.db.models.signals import post_delete
from django.dispatch import receiver
from django.utils import timezone

from runs.accounts.models import OwnedModel


class CheckState(models.TextChoices):
    """An upload spooled to disk is stored first and checked by the control plane's consumer
    (runs/datasets/deferred_check.py); everything else is checked (or not checkable here) as it is made."""
    CHECKING = "checking", "Being checked"
    READY = "ready", "Ready"
    REFUSED = "refused", "Refused"


# A check still `checking` this long after its upload no longer holds one of its owner's places
# (runs/background/limits.py): its message was lost, or the consumer is far behind.
CHECK_COUNTED_FOR = timedelta(minutes=30)


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
    state = models.CharField(max_length=10, choices=CheckState.choices, default=CheckState.READY)
    # While checking: {"rows": rows read, "bytes": bytes read (null for Parquet), "total_bytes": the file's size}.
    check_progress = models.JSONField(default=dict, blank=True)
    # Why the check refused the file (naming the line or row), and the request field to change.
    refusal = models.TextField(blank=True)
    refusal_field = models.CharField(max_length=50, blank=True)

    class Meta(OwnedModel.Meta):
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="dataset_name_unique_per_owner")]

    def __str__(self):
        return self.name

    @property
    def is_validated(self) -> bool:
        return self.row_count is not None

    def readiness_problem(self) -> str | None:
        """Why a run (or a dry run) may not use this dataset yet, or None when it may."""
        if self.state == CheckState.CHECKING:
            rows = (self.check_progress or {}).get("rows") or 0
            return (f"dataset {self.name!r} is still being checked ({rows} rows so far); "
                    "use it once its page says it is ready")
        if self.state == CheckState.REFUSED:
            return f"dataset {self.name!r} was refused by its check: {self.refusal}; upload a corrected file"
        return None

    @classmethod
    def checks_unfinished_of(cls, user):
        """The user's uploads whose check the consumer has not finished (uploaded within CHECK_COUNTED_FOR)."""
        return cls.objects.filter(owner=user, state=CheckState.CHECKING,
                                  created_at__gte=timezone.now() - CHECK_COUNTED_FOR)

    @classmethod
    def uploaded_bytes_of(cls, user) -> int:
        """What the user's uploaded files take (a refused file is deleted, so it takes nothing)."""
        uploads = cls.objects.filter(owner=user, source=cls.Source.UPLOAD).exclude(state=CheckState.REFUSED)
        return uploads.aggregate(total=Sum("size_bytes"))["total"] or 0

    # The check writes through these while it runs: each one UPDATE of a row still being checked,
    # so a dataset deleted meanwhile stays deleted and a check delivered twice finishes once.
    def note_check_progress(self, rows: int, bytes_read: int | None) -> None:
        progress = {**self.check_progress, "rows": rows, "bytes": bytes_read}
        self._while_checking(check_progress=progress)

    def finish_check(self, stored_fields: dict) -> bool:
        return self._while_checking(state=CheckState.READY, **stored_fields)

    def refuse(self, message: str, field: str) -> bool:
        refused = self._while_checking(state=CheckState.REFUSED, refusal=message, refusal_field=field)
        if refused and self.file.name:  # nothing of a refused file is used; its disk space is given back
            self.file.storage.delete(self.file.name)
        return refused

    def _while_checking(self, **fields) -> bool:
        changed = Dataset.objects.filter(pk=self.pk, state=CheckState.CHECKING).update(**fields)
        for name, value in fields.items():
            setattr(self, name, value)
        return bool(changed)

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
    if instance.file.name:
        storage, name = instance.file.storage, instance.file.name
        transaction.on_commit(lambda: storage.delete(name))
