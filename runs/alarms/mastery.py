"""A policy that stopped exploring and one that has learnt its task look alike to two alarms:
entropy near 0 (entropy_collapse) and every group's rewards equal (no_learning_signal). The
tool-use demo shows both once every episode is solved. Where the latest held-out evaluation
before the trip is (nearly) all right, the alarm still stands, since nothing more is learnt,
but says so, and what to do about it, instead of reading as a failure."""
from dataclasses import replace

from runs.alarms.rules import Trip
from runs.telemetry.models import MetricPoint
from worker.trainer.metric_names import EVAL_PASS_AT_1

EXPLAINED_BY_MASTERY = {"entropy_collapse", "no_learning_signal"}
MASTERED_PASS = 0.95  # held-out pass@1 from which the task counts as learnt


def with_mastery_noted(run, trips: list[Trip]) -> list[Trip]:
    """The trips, those a learnt task explains saying so; one query per such trip (trips are rare)."""
    return [_noted(run, trip) if trip.kind in EXPLAINED_BY_MASTERY else trip for trip in trips]


def _noted(run, trip: Trip) -> Trip:
    latest = (MetricPoint.objects.filter(run=run, name=EVAL_PASS_AT_1, step__lte=trip.step)
              .order_by("-step", "-id").values_list("step", "value").first())
    if latest is None or latest[1] < MASTERED_PASS:
        return trip
    step, share = latest
    note = (f"; held out {share:.2f} at step {step}: the task looks learnt, so little is left to learn "
            "from it (stop the run, or train on harder problems)")
    return replace(trip, message=trip.message + note, values={**trip.values, EVAL_PASS_AT_1: share})
