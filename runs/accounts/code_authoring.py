"""Saving code that runs on the workers (a reward's, an environment's, a verifiers environment)
needs the code authors' permission (runs/accounts/authoring.py); everything else in those
libraries does not. Checked before the serializer, so a refusal is a 403 and nothing is saved."""
from typing import TYPE_CHECKING, Any

from rest_framework.exceptions import PermissionDenied

from runs.accounts import authoring

if TYPE_CHECKING:
    from rest_framework.viewsets import ModelViewSet

    _ModelViewSet = ModelViewSet[Any]  # what the mixin goes before
else:
    _ModelViewSet = object


class CodeAuthoringChecked(_ModelViewSet):
    """A viewset mixin: create and update refuse code from users without the permission."""
    authoring_refusal = staticmethod(authoring.reward_refusal)

    def create(self, request, *args, **kwargs):
        self._check_authoring(request.data)
        return super().create(request, *args, **kwargs)

    def update(self, request, *args, **kwargs):
        self._check_authoring(request.data, self.get_object())
        return super().update(request, *args, **kwargs)

    def _check_authoring(self, data, instance=None):
        if refusal := self.authoring_refusal(self.request.user, data, instance):
            raise PermissionDenied(refusal)
