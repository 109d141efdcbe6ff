"""The workers' Celery app, configured from the environment alone (no Django).

Start one with `celery -A worker.celery_app worker -Q default` (or `make worker QUEUES=...`).
"""
import os
from pathlib import Path

from celery import Celery
from dotenv import load_dotenv

from worker.broker import celery_config

PROJECT_ROOT = Path(__file__).resolve().parent.parent
if os.environ.get("GRPO_DOTENV", "1") != "0":  # the same settings file as the control plane
    load_dotenv(PROJECT_ROOT / ".env", override=False)


def data_dir() -> Path:
    path = Path(os.environ.get("DATA_DIR") or "var").expanduser()
    return path if path.is_absolute() else (PROJECT_ROOT / path).resolve()


app = Celery("worker", include=["worker.tasks"])
app.conf.update(celery_config(os.environ.get("CELERY_BROKER_URL", ""), data_dir()))

# The inspect command that tells the control plane what this worker is; registered on import, so
# that `celery -A worker.celery_app inspect grpo_announce` knows it too.
import worker.inspection  # noqa: E402,F401
