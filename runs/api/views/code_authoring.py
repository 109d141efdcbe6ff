"""Saving Python code (a reward's, an environment's) needs the code authors' permission
(runs/rewards/authoring.py); everything else in those libraries does not."""
from rest_framework.exceptions import PermissionDenied

from runs.rewards import authoring


class CodeAuthoringChecked:
    """A viewset mixin: create and update refuse code from users without the permission."""
    refusal = authoring.REFUSAL

    def create(self, request, *args, **kwargs):
        self._check_authoring(request.data)
        return super().create(request, *args, **kwargs)

    def update(self, request, *args, **kwargs):
        self._check_authoring(request.data, self.get_object())
        return super().update(request, *args, **kwargs)

    def _check_authoring(self, data, instance=None):
        if authoring.touches_code(data, instance) and not authoring.can_author_code(self.request.user):
            raise PermissionDenied(self.refusal)
