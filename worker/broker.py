"""Celery configuration shared by the control plane (which sends) and workers (which receive).

No Django here: a worker on a GPU node is configured by environment variables
alone (CELERY_BROKER_URL, DATA_DIR), and must agree with the control plane on
where the embedded filesystem broker keeps its messages.
"""
from pathlib import Path

EXECUTE_RUN = "worker.tasks.execute_run"
DEFAULT_QUEUE = "default"
# The inspect command a live worker answers with what it consumes, runs and runs on (worker/inspection.py).
ANNOUNCE_COMMAND = "grpo_announce"


def filesystem_broker_dir(data_dir: Path) -> Path:
    return data_dir / "broker"


def celery_config(broker_url: str, data_dir: Path) -> dict:
    """Settings for a Celery app: embedded filesystem broker unless a URL is given."""
    config = {
        "task_default_queue": DEFAULT_QUEUE,
        # A run is long and must not be lost if a worker dies mid-way: ack after
        # the task ends, requeue when the worker is lost, take one at a time.
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_ignore_result": True,
        "broker_connection_retry_on_startup": True,
        "task_serializer": "json",
        "accept_content": ["json"],
    }
    if broker_url:
        config["broker_url"] = broker_url
        return config
    folder = filesystem_broker_dir(data_dir)
    for sub in ("out", "processed", "control"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    config["broker_url"] = "filesystem://"
    config["broker_transport"] = "worker.filesystem_transport:Transport"  # messages written whole
    config["broker_transport_options"] = {
        "data_folder_in": str(folder / "out"),
        "data_folder_out": str(folder / "out"),
        "processed_folder": str(folder / "processed"),
        # Broadcast (worker control) messages; kombu's default is ./control in the working directory.
        "control_folder": str(folder / "control"),
        "store_processed": False,
        # kombu polls the folder once a second by default: up to a second before a started
        # run is picked up. A listing of a near-empty folder five times a second costs nothing.
        "polling_interval": 0.2,
    }
    return config
