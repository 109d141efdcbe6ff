"""The live run page (/runs/<id>/). The server renders the run and what is cheap to gather
(status, frozen config, the steps that have samples, the log tail, checkpoints); the page's
scripts fetch the metric series over REST, then follow the run's websocket."""
from typing import cast

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.urls import path, reverse

from runs.alarms.panel import alarm_page_data
from runs.configs.form_fields import config_field_groups
from runs.evaluation.panel import evaluation_page_data
from runs.fleet.pools import waiting_note
from runs.hub.serializers import HubPushSerializer
from runs.live.events import status_payload
from runs.telemetry import metrics_query
from runs.telemetry.models import Sample
from runs.telemetry.sample_keeping import samples_kept
from runs.telemetry.serializers import CheckpointSerializer, LogLineSerializer
from runs.training_runs.models import ACTIVE, RunStatus
from runs.training_runs.pages.visible_runs import visible_run
from worker.trainer.metric_names import ROLLOUT_REWARD_MEAN, ROLLOUT_REWARD_STD

LOG_TAIL = 300
# The first chart's series travel with the page, so that it is drawn without waiting for a
# request; the page's script fetches the others over REST. Same sizing as the script asks for.
FIRST_SERIES = (ROLLOUT_REWARD_MEAN, ROLLOUT_REWARD_STD)
MAX_POINTS = 600


def checkpoint_rows(run) -> list[dict]:
    return [{**CheckpointSerializer(checkpoint).data,
             "download": reverse("run-checkpoint-download", args=[run.pk, checkpoint.pk])}
            for checkpoint in run.checkpoints.all()]


def log_tail(run, count: int = LOG_TAIL) -> list[dict]:
    newest = list(run.log_lines.order_by("-id")[:count])
    return cast(list[dict], LogLineSerializer(reversed(newest), many=True).data)  # many=True: a ReturnList


def first_series(run, names: list[str]) -> dict:
    return {name: metrics_query.series(run, name, None, None, MAX_POINTS) for name in FIRST_SERIES if name in names}


def page_data(run) -> dict:
    """Everything run_page.js starts from; the rest comes over REST and the websocket."""
    api = reverse("run-detail", args=[run.pk])
    names = metrics_query.metric_names(run)
    return {
        "run": run.pk, "name": run.name, "status": status_payload(run), "max_steps": run.max_steps,
        # The page shows buttons and labels from the server's rules; after a live status change
        # it asks the API (urls.run) for the allowed actions again.
        "allowed_actions": run.allowed_actions(), "status_labels": dict(RunStatus.choices),
        "active_statuses": sorted(ACTIVE),
        "started_at": run.started_at, "finished_at": run.finished_at,
        "reward_names": [rr.reward_function.name for rr in run.run_rewards.all()],
        "lora": bool(run.config.get("lora")),  # which parts a checkpoint exports (adapter, merged model)
        "urls": {
            "run": api, "metrics": reverse("run-metrics", args=[run.pk]),
            "samples": reverse("run-samples", args=[run.pk]),
            "sample_steps": reverse("run-sample-steps", args=[run.pk]),
            "logs": reverse("run-logs", args=[run.pk]), "checkpoints": reverse("run-checkpoints", args=[run.pk]),
            "download": reverse("run-checkpoint-download", args=[run.pk, 0]).replace("/0/", "/{id}/"),
            "push": reverse("run-checkpoint-push", args=[run.pk, 0]).replace("/0/", "/{id}/"),
            "pushes": reverse("run-pushes", args=[run.pk]),
            # "Where the time goes" (run_diagnosis.js): the bottleneck and what to change.
            "diagnosis": reverse("run-diagnosis", args=[run.pk]),
            "socket": f"/ws/runs/{run.pk}/",
        },
        "metric_names": names, "first_series": first_series(run, names), "max_points": MAX_POINTS,
        "sample_steps": Sample.objects.steps_of(run.pk),
        "logs": log_tail(run),
        "checkpoints": checkpoint_rows(run),
        # Pushes to the Hub: the form posts to urls.push, the list polls urls.pushes while one is going.
        "pushes": HubPushSerializer(run.hub_pushes.select_related("checkpoint", "requested_by"), many=True).data,
        "hub_endpoint": settings.HF_HUB_ENDPOINT,
        # Panels with modules of their own add their keys (and urls) here.
        **alarm_page_data(run), **evaluation_page_data(run),
    }


@login_required
def run_page(request, pk: int):
    run = visible_run(request, pk)
    rewards = list(run.run_rewards.select_related("reward_function"))
    data = page_data(run)
    return render(request, "runs/run.html", {
        "run": run, "rewards": rewards, "config_groups": config_field_groups(run.config),
        "data": data, "allowed_actions": data["allowed_actions"],
        "waiting_note": waiting_note(run),  # a queued run that no live worker can take says so
        "samples_kept": samples_kept(run.config),  # what the completions panel holds of each step
    })


urlpatterns = [path("runs/<int:pk>/", run_page, name="page-run")]
