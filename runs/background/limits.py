"""How much unfinished background work one account may have of each kind, claimed atomically.

Without a limit one account's thousand dry runs would queue ahead of everyone's work. A place is
claimed in the transaction that stores the work's row, under a lock on the account's row:
SELECT ... FOR UPDATE on PostgreSQL; on SQLite the database's one write lock (settings.py opens
transactions IMMEDIATE, and a write comes first anyway, for a DEFERRED one). So two requests for
the last place are served one after the other, and the second counts the first's row. Staff are
not exempt: the queue they would fill is everyone's. Each kind is one setting, named in the refusal.
"""
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import F

from runs.datasets.models import Dataset
from runs.environments.models.dry_run import EnvironmentDryRun
from runs.hub.models import HubPush
from runs.rewards.models.dry_run import RewardDryRun


@dataclass(frozen=True)
class Kind:
    words: str  # what the refusal calls this work, plural
    setting: str
    unfinished_of: Callable  # user -> the queryset of the user's unfinished rows of this kind

    @property
    def limit(self) -> int:
        return getattr(settings, self.setting)


REWARD_DRY_RUNS = Kind("dry runs of judges and reward models", "BACKGROUND_UNFINISHED_PER_ACCOUNT_REWARD_DRY_RUNS",
                       RewardDryRun.unfinished_of)
ENVIRONMENT_DRY_RUNS = Kind("environment dry runs played by a model",
                            "BACKGROUND_UNFINISHED_PER_ACCOUNT_ENVIRONMENT_DRY_RUNS", EnvironmentDryRun.unfinished_of)
HUB_PUSHES = Kind("pushes to the Hub", "BACKGROUND_UNFINISHED_PER_ACCOUNT_HUB_PUSHES", HubPush.unfinished_of)
DATASET_CHECKS = Kind("checks of large dataset uploads", "BACKGROUND_UNFINISHED_PER_ACCOUNT_DATASET_CHECKS",
                      Dataset.checks_unfinished_of)
KINDS = (REWARD_DRY_RUNS, ENVIRONMENT_DRY_RUNS, HUB_PUSHES, DATASET_CHECKS)


class UnfinishedLimitReached(Exception):
    """The account has `limit` unfinished already: a 429 in the API (runs/web/errors.py), a message on a page."""

    def __init__(self, kind: Kind, unfinished: int):
        self.kind, self.unfinished, self.limit = kind, unfinished, kind.limit
        super().__init__(f"you have {unfinished} {kind.words} queued or running, and an account may have "
                         f"{self.limit} at once ({kind.setting}); wait for one to finish, then ask again. "
                         "Nothing was stored")

    def as_json(self) -> dict:
        return {"detail": str(self), "limit": self.limit, "unfinished": self.unfinished, "setting": self.kind.setting}


def lock_account(user) -> None:
    """Holds the account's row until the current transaction ends; call inside transaction.atomic."""
    accounts = get_user_model().objects.filter(pk=user.pk)
    if connection.features.has_select_for_update:
        list(accounts.select_for_update().values_list("pk", flat=True))
    else:  # SQLite has no row locks: a write takes the database's write lock, held to the commit
        accounts.update(last_login=F("last_login"))


def refuse_past_limit(kind: Kind, user) -> None:
    """UnfinishedLimitReached when the user has no place left of `kind`; the account must be locked."""
    unfinished = kind.unfinished_of(user).count()
    if unfinished >= kind.limit:
        raise UnfinishedLimitReached(kind, unfinished)


@contextmanager
def place_for(kind: Kind, user):
    """A transaction in which the user holds a place of `kind`: the body stores the work's row (and
    enqueues it, sent on commit). Refused (nothing stored) when the account's places are taken."""
    with transaction.atomic():
        lock_account(user)
        refuse_past_limit(kind, user)
        yield
