"""The run page's alarms panel: the alarms the run raised, which run_alarms.js shows and keeps
live (run.alarm), and where it asks for them again after a reconnection."""
from django.urls import reverse

from runs.alarms.serializers import AlarmSerializer
from worker.trainer.config import ALARMS


def alarm_page_data(run) -> dict:
    return {"alarms": AlarmSerializer(run.alarms.all(), many=True).data,
            "alarm_url": reverse("run-alarms", args=[run.pk]), "alarm_kinds": ALARMS}
