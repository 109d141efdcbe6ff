from rest_framework import serializers


class VisiblePrimaryKeyField(serializers.PrimaryKeyRelatedField):
    """A reference to another object; only objects the requesting user may see are accepted,
    so a foreign id reads as "does not exist" rather than revealing it."""

    def get_queryset(self):
        return super().get_queryset().visible_to(self.context["request"].user)


def unique_name_for_owner(serializer, model, name: str) -> str:
    owner = serializer.context["request"].user
    clash = model.objects.filter(owner=owner, name=name)
    if serializer.instance is not None:
        clash = clash.exclude(pk=serializer.instance.pk)
    if clash.exists():
        raise serializers.ValidationError(f"you already have a {model._meta.verbose_name} named {name!r}")
    return name
