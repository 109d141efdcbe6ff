"""What a queued dry run is, of a reward or of an environment: one abstract table that each kind's
table extends (so the two tables stay as they are), with the states and the writes they share.

A model is loaded (or a judge served) for it: minutes on a CPU, never inside a request. The
request stores the row, the control plane's consumer does the work (runs/dry_runs/jobs.py),
and the page and the API poll the row. The consumer writes it only while it is unfinished, one
UPDATE each time, so that work delivered twice finishes once and a row whose reward or environment
was deleted meanwhile stays deleted. A user keeps a bounded number of rows, and has a bounded
number unfinished (runs/background/limits.py).
"""
from collections.abc import Callable
from datetime import timedelta
from typing import Self

from django.conf import settings
from django.db import models
from django.utils import timezone

KEPT_PER_USER = 20  # older finished rows of a user are removed as a new one is asked
# A row unfinished and untouched this long was lost (a consumer that died, a message dropped): it
# is failed saying so, rather than holding one of the user's places (limits.py) for ever. A dry run's
# own limits end it well before.
LOST_AFTER = timedelta(minutes=30)
QUEUED, LOADING, DONE, FAILED = "queued", "loading", "done", "failed"


class DryRun(models.Model):
    """A kind says what it is of (SUBJECT, a foreign key), its `state` with its choices, the state in
    which it works (WORKING) and the field that counts how far (PROGRESS), and its `result`."""
    SUBJECT: str
    WORKING: str
    PROGRESS: str
    QUEUED, LOADING, DONE, FAILED = QUEUED, LOADING, DONE, FAILED
    get_state_display: Callable[[], str]  # what Django adds for each kind's choices

    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    # The validated request and what it works on, read when it was asked.
    asked = models.JSONField()
    state = models.CharField(max_length=10)  # each kind's own, with its choices, replaces this one
    error = models.TextField(blank=True, help_text="When failed: why.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"dry run {self.pk} of {self.SUBJECT} {self.subject_id} ({self.state})"

    @property
    def subject_id(self) -> int:
        return getattr(self, f"{self.SUBJECT}_id")

    # An abstract table has no `objects` for the type checker: `_default_manager` is each kind's.
    @classmethod
    def ask(cls, subject, user, asked: dict, **fields) -> Self:
        cls.make_room(user)
        return cls._default_manager.create(**{cls.SUBJECT: subject}, requested_by=user, asked=asked, **fields)

    @classmethod
    def finished_states(cls) -> tuple[str, str]:
        return cls.DONE, cls.FAILED

    @classmethod
    def make_room(cls, user) -> None:
        """Removes the user's oldest finished rows beyond KEPT_PER_USER - 1, before a new one."""
        finished = (cls._default_manager.filter(requested_by=user, state__in=cls.finished_states())
                    .values_list("pk", flat=True))
        cls._default_manager.filter(pk__in=list(finished[KEPT_PER_USER - 1:])).delete()

    @classmethod
    def unfinished_of(cls, user):
        """The user's rows still queued or being worked on (what runs/background/limits.py counts);
        one untouched for LOST_AFTER is failed as lost first, so that it no longer holds a place."""
        unfinished = cls._default_manager.filter(requested_by=user).exclude(state__in=cls.finished_states())
        minutes = int(LOST_AFTER.total_seconds() // 60)
        unfinished.filter(updated_at__lt=timezone.now() - LOST_AFTER).update(
            state=cls.FAILED, error=f"lost: not finished nor heard of for {minutes} minutes", updated_at=timezone.now())
        return unfinished

    @property
    def finished(self) -> bool:
        return self.state in self.finished_states()

    def progress_text(self) -> str:
        """What the page shows while it waits: queued → loading → (how far it works) → done."""
        if self.state == self.WORKING:
            return self.working_text()
        return self.get_state_display().lower()

    def working_text(self) -> str:
        raise NotImplementedError

    # The consumer writes through these four, each only while the row is unfinished.
    def mark_loading(self) -> None:
        self._unfinished(state=self.LOADING)

    def mark_progress(self, done: int) -> None:
        self._unfinished(state=self.WORKING, **{self.PROGRESS: done})

    def finish(self, result: dict) -> None:
        self._unfinished(state=self.DONE, result=result)

    def fail(self, reason: str) -> None:
        self._unfinished(state=self.FAILED, error=reason)

    def _unfinished(self, **fields) -> None:
        type(self)._default_manager.filter(pk=self.pk).exclude(state__in=self.finished_states()).update(
            updated_at=timezone.now(), **fields)
        for name, value in fields.items():
            setattr(self, name, value)
