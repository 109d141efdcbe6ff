"""The control plane's Celery app: it only sends. Workers use worker.celery_app."""
from celery import Celery
from django.conf import settings

app = Celery("controlplane")
app.conf.update(settings.CELERY)
