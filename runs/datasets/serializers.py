import hashlib

from django.conf import settings
from django.db import transaction
from rest_framework import serializers

from runs.accounts.upload_quota import refuse_past_quota
from runs.background.limits import DATASET_CHECKS, lock_account, refuse_past_limit
from runs.datasets import deferred_check
from runs.datasets.formats import DatasetFileError, detect_format
from runs.datasets.models import CheckState, Dataset
from runs.datasets.validation import generator_fields, inspect_file
from runs.web.errors import PayloadTooLarge
from runs.web.fields import StrictTextModelSerializer, unique_name_for_owner
from worker.trainer.hub_ids import dataset_hub_id_problem

SOURCE_FIELDS = ("source", "file", "hub_id", "split", "generator", "generator_params", "prompt_column")
# The fields that only one source reads: given with another source they would be stored and
# ignored, and the dataset would not be the one its creator described.
FIELDS_OF_SOURCE = {Dataset.Source.UPLOAD: ("file",), Dataset.Source.HUB: ("hub_id", "split"),
                    Dataset.Source.GENERATOR: ("generator", "generator_params")}


class DatasetSerializer(StrictTextModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    # Empty files are let through so that the refusal can name the file.
    file = serializers.FileField(write_only=True, required=False, allow_empty_file=True)
    file_name = serializers.SerializerMethodField()
    generator_params = serializers.DictField(required=False, help_text="The generator's parameters (source=generator).")

    class Meta:
        model = Dataset
        fields = [
            "id", "name", "owner", "source", "file", "file_name", "file_format", "sha256", "size_bytes", "hub_id",
            "split", "generator", "generator_params", "prompt_column", "prompt_format", "columns",
            "row_count", "preview", "state", "check_progress", "refusal", "refusal_field", "created_at", "updated_at",
        ]
        read_only_fields = ["file_format", "sha256", "size_bytes", "prompt_format", "columns", "row_count", "preview",
                            "state", "check_progress", "refusal", "refusal_field"]
        extra_kwargs = {
            "state": {"help_text": "ready; checking: a large upload whose rows the control plane's consumer is "
                                   "checking (a run on it is refused until it is ready); refused: see refusal."},
            "check_progress": {"help_text": "While checking: rows and bytes read so far, and total_bytes."},
            "refusal": {"help_text": "Why the check refused the file (naming its line or row); nothing of it is used."},
            "refusal_field": {"help_text": "The field to change for a refused file (file or prompt_column)."},
        }

    def get_file_name(self, dataset) -> str:
        return dataset.file.name.rsplit("/", 1)[-1] if dataset.file else ""

    def validate_name(self, value):
        return unique_name_for_owner(self, Dataset, value)

    def validate(self, attrs):
        if self.instance is not None:
            changed = [f for f in SOURCE_FIELDS if f in attrs and attrs[f] != getattr(self.instance, f, None)]
            if changed:
                raise serializers.ValidationError(
                    {f: "the source of a dataset cannot change; create a new dataset" for f in changed})
            return attrs
        if attrs["source"] == Dataset.Source.ENVIRONMENT:
            raise serializers.ValidationError({"source": "a verifiers environment's dataset is made as the "
                                                         "environment is saved (/api/environments/)"})
        refuse_fields_of_other_sources(attrs)
        check = {Dataset.Source.UPLOAD: self._check_upload, Dataset.Source.HUB: self._check_hub,
                 Dataset.Source.GENERATOR: self._check_generator}[attrs["source"]]
        return check(attrs)

    def _check_upload(self, attrs):
        upload = attrs.get("file")
        if upload is None:
            raise serializers.ValidationError({"file": "attach a JSONL, CSV or Parquet file"})
        if upload.size > settings.DATASET_UPLOAD_MAX_BYTES:
            # Normally refused earlier from Content-Length; this catches chunked uploads.
            raise PayloadTooLarge(too_large_message(upload.size, upload.name))
        if upload.size == 0:
            raise serializers.ValidationError({"file": f"{upload.name!r} is empty"})
        refuse_past_quota(self.context["request"].user, upload.size)  # again as it is saved, under the lock
        prompt_column = attrs.get("prompt_column", "prompt")
        try:
            fmt = detect_format(upload.name)
            if deferred_check.checked_later(upload):  # large: stored now, checked by the consumer
                return {**attrs, "file_format": fmt, **deferred_check.fields_while_checking(upload)}
            inspection = inspect_file(upload, fmt, prompt_column)
        except DatasetFileError as exc:
            raise serializers.ValidationError({exc.field: f"{upload.name}: {exc}"}) from None
        return {**attrs, "file_format": fmt, **inspection.stored_fields(), **content_fields(upload)}

    def create(self, validated_data):
        """Stores the dataset in the transaction that holds its owner's account: an upload past the
        owner's quota, or a check past their places for checks, is refused before its file is stored."""
        owner = validated_data["owner"]
        with transaction.atomic():
            lock_account(owner)
            if validated_data["source"] == Dataset.Source.UPLOAD:
                refuse_past_quota(owner, validated_data["file"].size)
            if validated_data.get("state") == CheckState.CHECKING:
                refuse_past_limit(DATASET_CHECKS, owner)
            dataset = super().create(validated_data)
            if dataset.state == CheckState.CHECKING:
                deferred_check.check_after_commit(dataset)
        return dataset

    def _check_hub(self, attrs):
        # A hub id, never a path: datasets.load_dataset reads a local folder of that name on the
        # worker (its dataset cache, say). The worker checks again before loading (data/loading.py).
        if problem := dataset_hub_id_problem(attrs.get("hub_id", "")):
            raise serializers.ValidationError({"hub_id": problem})
        # Hub datasets cannot be fetched here; the worker loads and checks them.
        return {**attrs, "split": attrs.get("split") or "train", "file": None}

    def _check_generator(self, attrs):
        try:
            checked = generator_fields(
                attrs.get("generator", ""), attrs.get("generator_params") or {}, attrs.get("prompt_column", "prompt"))
        except DatasetFileError as exc:
            raise serializers.ValidationError({exc.field: str(exc)}) from None
        return {**attrs, **checked, "file": None}


def refuse_fields_of_other_sources(attrs: dict) -> None:
    """Refuses, naming each, the fields given with a value that only another source reads."""
    source = attrs["source"]
    foreign = {field: f"applies to source={other} only; this dataset's source is {source}"
               for other, fields in FIELDS_OF_SOURCE.items() if other != source
               for field in fields if attrs.get(field) not in (None, "", {})}
    if foreign:
        raise serializers.ValidationError(foreign)


def content_fields(upload) -> dict:
    """The upload's sha256 and size, read in chunks; the file is left at its start for saving."""
    digest = hashlib.sha256()
    upload.seek(0)
    for chunk in upload.chunks():
        digest.update(chunk)
    upload.seek(0)
    return {"sha256": digest.hexdigest(), "size_bytes": upload.size}


def too_large_message(size: int, filename: str = "the upload") -> str:
    limit = settings.DATASET_UPLOAD_MAX_BYTES
    return f"{filename} is {_size(size)}; the limit is {_size(limit)} (DATASET_UPLOAD_MAX_MB); nothing was stored"


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n / (1024 * 1024):.1f} MiB"
