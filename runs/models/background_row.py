"""What a row of background work done by the control plane's consumer (a dry run) shares: the
consumer writes it only while it is unfinished, and a user keeps a bounded number of them (and
has a bounded number unfinished: runs/background/limits.py).

Each write is one UPDATE of an unfinished row, so that work delivered twice finishes once and a
row whose reward or environment was deleted meanwhile stays deleted. A model using this has the
fields `state`, `requested_by`, `result`, `error` and `updated_at`, and says its states.
"""
from datetime import timedelta

from django.utils import timezone

KEPT_PER_USER = 20  # older finished rows of a user are removed as a new one is asked
# A row unfinished and untouched this long was lost (a consumer that died, a message dropped): it
# is failed saying so, rather than holding one of the user's places (limits.py) for ever. A dry run's
# own limits end it well before.
LOST_AFTER = timedelta(minutes=30)


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
        """The user's rows still queued or being worked on (what runs/background/limits.py counts);
        one untouched for LOST_AFTER is failed as lost first, so that it no longer holds a place."""
        unfinished = cls.objects.filter(requested_by=user).exclude(state__in=cls.finished_states())
        minutes = int(LOST_AFTER.total_seconds() // 60)
        unfinished.filter(updated_at__lt=timezone.now() - LOST_AFTER).update(
            state=cls.FAILED, error=f"lost: not finished nor heard of for {minutes} minutes", updated_at=timezone.now())
        return unfinished

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
