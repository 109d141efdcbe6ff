"""A run's alarms (runs/alarms/): each one raised, and the summary a run carries."""
from rest_framework import serializers

from runs.alarms.models import Alarm
from worker.trainer.config import ALARMS

KINDS = list(ALARMS.items())


class AlarmSerializer(serializers.ModelSerializer):
    kind = serializers.ChoiceField(choices=KINDS, read_only=True,
                                   help_text="What tripped (the names alarm_stop_on takes).")
    values = serializers.DictField(
        child=serializers.FloatField(), read_only=True,
        help_text="The numbers that tripped it: the metrics at its step (eval_diverging: pass@1 and the mean training "
                  "reward since the earlier evaluation, and *_before for that evaluation and the window before it) "
                  "and the thresholds, by their config names.")
    stopped_run = serializers.BooleanField(read_only=True,
                                           help_text="It was in alarm_stop_on: the run was asked to checkpoint "
                                                     "and cancel.")

    class Meta:
        model = Alarm
        fields = ["id", "kind", "step", "message", "values", "stopped_run", "created_at"]
        read_only_fields = fields


class AlarmSummarySerializer(serializers.ModelSerializer):
    """The newest alarm of one kind (runs.alarms.summary)."""
    kind = serializers.ChoiceField(choices=KINDS, read_only=True)
    times = serializers.IntegerField(read_only=True, help_text="How many alarms of this kind the run raised.")
    stopped_run = serializers.BooleanField(source="stopped", read_only=True,
                                           help_text="One of them stopped the run.")

    class Meta:
        model = Alarm
        fields = ["kind", "times", "step", "message", "stopped_run"]
        read_only_fields = fields
