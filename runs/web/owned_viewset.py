"""A viewset over the requesting user's own objects, which the library's and the runs' viewsets share."""
from typing import TypeVar

from django.db.models import QuerySet
from rest_framework import viewsets
from rest_framework.serializers import BaseSerializer

from runs.accounts.models import OwnedModel

_Owned = TypeVar("_Owned", bound=OwnedModel)


class OwnedViewSet(viewsets.ModelViewSet[_Owned]):
    """CRUD over the requesting user's objects (all of them for staff); others' are 404."""

    model: type[_Owned]  # each viewset names its model
    lookup_value_regex = r"\d+"  # ids only: anything else is a plain 404 from the router

    def get_queryset(self) -> QuerySet[_Owned]:
        return self.model.objects.visible_to(self.request.user).select_related("owner")

    def perform_create(self, serializer: BaseSerializer[_Owned]) -> None:
        serializer.save(owner=self.request.user)
