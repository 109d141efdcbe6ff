"""Fields shared by the API's serializers (the pages' forms validate through them too)."""
from typing import cast

from rest_framework import serializers

from runs.accounts.models import OwnedQuerySet
from runs.web.strict_bodies import StrictBody


class VisiblePrimaryKeyField(serializers.PrimaryKeyRelatedField):
    """A reference to another object; only objects the requesting user may see are accepted,
    so a foreign id reads as "does not exist" rather than revealing it."""

    def get_queryset(self) -> OwnedQuerySet:
        # Always given an owned model's objects (queryset=Model.objects.all()).
        owned = cast(OwnedQuerySet, super().get_queryset())
        return owned.visible_to(self.context["request"].user)


class StrictCharField(serializers.CharField):
    """Text that must be sent as text: DRF would store the number 0 as "0" and an object as its repr."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


# A request body of model fields: unknown fields refused, JSON types kept (runs/web/strict_bodies.py),
# model text columns read with StrictCharField. (Comments, not docstrings: the schema would show a
# docstring as the description of every serializer built on these.)
class StrictTextModelSerializer(StrictBody, serializers.ModelSerializer):
    def build_standard_field(self, field_name, model_field):
        field_class, kwargs = super().build_standard_field(field_name, model_field)
        if field_class is serializers.CharField:
            field_class = StrictCharField
        return field_class, kwargs


# A request body of declared fields, held as StrictTextModelSerializer's are.
class StrictRequestSerializer(StrictBody, serializers.Serializer):
    pass


def unique_name_for_owner(serializer, model, name: str) -> str:
    owner = serializer.context["request"].user
    clash = model.objects.filter(owner=owner, name=name)
    if serializer.instance is not None:
        clash = clash.exclude(pk=serializer.instance.pk)
    if clash.exists():
        raise serializers.ValidationError(f"you already have a {model._meta.verbose_name} named {name!r}")
    return name
