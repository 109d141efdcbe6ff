"""A run's alarms at a glance: the newest of each kind it raised, how many of that kind, and
whether one stopped the run. At most one row per kind, however long the run, so that lists of
runs stay small; one prefetch query for a page of runs."""
from django.db.models import Count, Exists, OuterRef, Prefetch, Subquery

from runs.alarms.models import Alarm

ATTRIBUTE = "alarm_summary"


def newest_of_each_kind():
    same_kind = Alarm.objects.filter(run=OuterRef("run"), kind=OuterRef("kind"))
    newest = same_kind.order_by("-id").values("pk")[:1]
    times = same_kind.order_by().values("kind").annotate(count=Count("pk")).values("count")
    return (Alarm.objects.filter(pk=Subquery(newest))
            .annotate(times=Subquery(times), stopped=Exists(same_kind.filter(stopped_run=True)))
            .order_by("-id"))


def with_alarm_summary(runs):
    """`runs` with each run's summary prefetched (as `alarm_summary`)."""
    return runs.prefetch_related(Prefetch("alarms", queryset=newest_of_each_kind(), to_attr=ATTRIBUTE))


def alarm_summary(run) -> list[Alarm]:
    """The newest alarm of each kind, newest first; each with `times` and `stopped`."""
    if hasattr(run, ATTRIBUTE):
        return getattr(run, ATTRIBUTE)
    return list(newest_of_each_kind().filter(run=run))
