"""What a row of background work done by the control plane's consumer (a dry run) shares: the
consumer writes it only while it is unfinished, and a user keeps a bounded number of them.

Each write is one UPDATE of an unfinished row, so that work delivered twice finishes once and a
row whose reward or environment was deleted meanwhile stays deleted. A model using this has the
fields `state`, `requested_by`, `result`, `error` and `updated_at`, and says its states.
"""
from django.utils import timezone

KEPT_PER_USER = 20  # older finished rows of a user are removed as a new one is asked


class BackgroundRow:
    DONE: str
    FAILED: str

    @classmethod
    def finished_states(cls) -> tuple[str, str]:
        return cls.DONE, cls.FAILED

    @classmethod
    def make_room(cls, user) -> None:
        """Removes the user's oldest finished rows beyond KEPT_PER_USER - 1, before a new one."""
        finished = cls.objects.filter(requested_by=user, state__in=cls.finished_states()).values_list("pk", flat=True)
        cls.objects.filter(pk__in=list(finished[KEPT_PER_USER - 1:])).delete()

    @classmethod
    def unfinished_of(cls, user):
        """The user's row still queued or being worked on, if any (the oldest)."""
        return (cls.objects.filter(requested_by=user).exclude(state__in=cls.finished_states())
                .order_by("created_at", "id").first())

    @property
    def finished(self) -> bool:
        return self.state in self.finished_states()

    def finish(self, result: dict) -> None:
        self._unfinished(state=self.DONE, result=result)

    def fail(self, reason: str) -> None:
        self._unfinished(state=self.FAILED, error=reason)

    def _unfinished(self, **fields) -> None:
        type(self).objects.filter(pk=self.pk).exclude(state__in=self.finished_states()).update(
            updated_at=timezone.now(), **fields)
        for name, value in fields.items():
            setattr(self, name, value)
