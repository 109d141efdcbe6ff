"""A Trainer built from a minimal launch spec (no server, no control plane: it reports to
files), and the log lines it wrote there."""
import json

from worker.trainer.app import Trainer
from worker.trainer.config import TrainingConfig
from worker.trainer.models.paths import models_dir
from worker.trainer.spec import LaunchSpec


def trainer_for(tmp_path, config: TrainingConfig | None = None, rewards=None) -> Trainer:
    return Trainer(LaunchSpec.model_validate({
        # A model the operator's folder would hold (models/paths.py), missing: loading it fails.
        "run_id": 1, "model": str(models_dir() / "no-such-model"), "output_dir": str(tmp_path / "out"),
        "dataset": {"kind": "generator", "generator": "arithmetic", "params": {"count": 8}},
        "rewards": rewards or [{"name": "acc", "kind": "builtin", "builtin": "accuracy"}],
        "config": (config or TrainingConfig(max_steps=1)).model_dump(),
    }))


def logged_lines(tmp_path) -> list[str]:
    lines = (tmp_path / "out" / "events" / "events-trainer-1.jsonl").read_text().splitlines()
    return [event["message"] for event in map(json.loads, lines) if event["type"] == "log"]
