"""Checks a run's recent signals after each ingest batch, inside its transaction.

Only the steps the batch brought can trip (a re-delivered batch brings none, since the ingest
skips stored events), and the rules read a bounded window before them; a batch without any
watched metric costs no query.
"""
from runs.alarms.divergence import eval_trips
from runs.alarms.mastery import with_mastery_noted
from runs.alarms.raising import raise_alarms
from runs.alarms.recent import eval_window, fresh_steps, signal_window
from runs.alarms.rules import RULES, Trip, rule_trips, watched
from runs.alarms.settings import AlarmSettings
from runs.alarms.streaks import lookback
from worker.trainer.metric_names import EVAL_PASS_AT_1


def watch_signals(run, points) -> None:
    """Raises the alarms that this batch's metric points (runs.live.messages.MetricPointRow),
    already stored, trip."""
    settings = AlarmSettings.of(run.config)
    raise_alarms(run, signal_trips(run, points, settings) + evaluation_trips(run, points, settings), settings)


def signal_trips(run, points, settings: AlarmSettings) -> list[Trip]:
    reported = watched({name for point in points for name in point.values})
    fresh = fresh_steps(points, reported)
    if not fresh:
        return []
    window = signal_window(run, fresh, tuple(reported), lookback(settings.patience, settings.patience))
    return with_mastery_noted(run, [trip for rule in RULES for trip in rule_trips(rule, window, fresh, settings)])


def evaluation_trips(run, points, settings: AlarmSettings) -> list[Trip]:
    fresh = fresh_steps(points, (EVAL_PASS_AT_1,))
    if not fresh:
        return []
    evals, rewards = eval_window(run, fresh)
    return eval_trips(evals, rewards, fresh, settings.thresholds["alarm_eval_drop"])
