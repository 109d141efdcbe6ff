"""A viewset over the requesting user's own objects, which the library's and the runs' viewsets share."""
from rest_framework import viewsets


class OwnedViewSet(viewsets.ModelViewSet):
    """CRUD over the requesting user's objects (all of them for staff); others' are 404."""

    model = None
    lookup_value_regex = r"\d+"  # ids only: anything else is a plain 404 from the router

    def get_queryset(self):
        return self.model.objects.visible_to(self.request.user).select_related("owner")

    def perform_create(self, serializer):
        serializer.save(owner=self.request.user)
