"""The layering rules of ../shared/design/ARCHITECTURE.md, checked by scanning imports with `ast`.

- worker/trainer/ runs on a GPU node from a JSON spec: no Django, Celery, Channels or DRF,
  nothing from the control plane, and nothing from the Celery side of worker/;
- worker/ (the Celery side) never touches the database: no Django, no `runs`;
- the control plane imports from worker/ only the schemas both sides share and the few
  modules it is meant to use (ALLOWED_FROM_WORKER);
- only runs/events.py sends to the channel layer.
"""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FRAMEWORKS = ("django", "celery", "channels", "channels_redis", "rest_framework", "drf_spectacular")
CONTROL_PLANE = ("runs", "controlplane")

# What runs/ and controlplane/ may import from worker/, and why.
ALLOWED_FROM_WORKER = {
    "worker.broker": "the queue names and the Celery settings both sides must agree on",
    "worker.announcement": "what a live worker answers when the control plane asks the fleet",
    "worker.devices": "a worker's devices as it announces them (GPUs, CPU cores, RAM)",
    "worker.trainer.config": "the training config schema",
    "worker.trainer.checkpoints.manifest": "what an uploaded checkpoint holds, checked before it is listed",
    "worker.trainer.events": "the event schema of the ingest",
    "worker.trainer.spec": "the launch spec a started run freezes",
    "worker.trainer.data.generators": "built-in dataset generators, previewed by the control plane",
    "worker.trainer.models.paths": "where a model name resolves under DATA_DIR, and which names a run may give",
    "worker.trainer.hub_ids": "what a dataset's hub id may be (a name, never a path), checked before it is saved",
    "worker.trainer.rewards.builtins": "built-in rewards, scored in dry runs",
    "worker.trainer.rewards.catalog": "the built-in rewards' parameters, shown as forms",
    "worker.trainer.rewards.source_check": "the static check of reward code before it is saved",
    "worker.trainer.rewards.sandbox": "the sandbox that runs reward code in dry runs",
    "worker.trainer.rewards.sandbox.results": "what a sandbox call returns",
    "worker.trainer.environments.catalog": "the built-in environments' parameters, checked and shown as forms",
    "worker.trainer.environments.source_check": "the static check of environment code before it is saved",
    "worker.trainer.environments.verifiers_check": "whether a verifiers environment can be loaded",
    "worker.trainer.environments.base": "the Environment a dry run's built-in is wrapped as, its steps in a "
                                        "process a time limit stops",
    "worker.trainer.environments.episodes": "the episode runner, which plays dry runs as it plays runs",
    "worker.trainer.environments.loading": "the environment a run would load, played in dry runs",
    "worker.trainer.environments.rendering": "the chat template's text for a dry run against the model",
    "worker.trainer.environments.tool_calls": "the tool schemas a dry run against the model renders",
    "worker.trainer.rollout.groups": "the completion a dry run's sampler hands the episode runner",
    "worker.trainer.rewards.judges.catalog": "judges' and reward models' parameters, checked and shown as forms",
    "worker.trainer.rewards.judges.judge": "the judge a dry run calls (in the consumer), as runs do",
    "worker.trainer.rewards.judges.reward_model": "the reward model a dry run loads (in the consumer)",
    "worker.trainer.inference.launch": "a served judge's dry run starts its model in vLLM (in the consumer)",
    "worker.trainer.inference.server": "the vLLM server process a served judge's dry run starts and stops",
}
CHANNEL_LAYER_OWNER = "runs/events.py"


def imported_modules(source: str) -> list[str]:
    """Every module an `import` or `from ... import` names, anywhere in the source (inside
    functions too). `from a import b` counts as `a.b` as well, since b may be a module."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
            found += [f"{node.module}.{alias.name}" for alias in node.names]
    return found


def is_within(module: str, packages) -> bool:
    return any(module == package or module.startswith(package + ".") for package in packages)


def python_files(*folders: str) -> list[Path]:
    return sorted(path for folder in folders for path in (ROOT / folder).rglob("*.py"))


def relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


def violations(files, forbidden) -> list[str]:
    """`file: module` for each import in `files` for which `forbidden(module)` is true."""
    return [f"{relative(path)}: {module}" for path in files
            for module in imported_modules(path.read_text()) if forbidden(module)]


def test_the_trainer_imports_no_framework_nor_the_control_plane_nor_the_celery_side():
    def forbidden(module):
        return (is_within(module, FRAMEWORKS + CONTROL_PLANE)
                or (is_within(module, ("worker",)) and not is_within(module, ("worker.trainer",))))

    assert violations(python_files("worker/trainer"), forbidden) == []


def test_the_api_client_needs_nothing_but_http():
    """It runs on a laptop with requirements.txt at most: no Django, no worker, no control plane."""
    def forbidden(module):
        return is_within(module, ("django", "rest_framework", "worker", "torch") + CONTROL_PLANE)

    assert violations(python_files("client"), forbidden) == []


def test_the_celery_side_never_touches_the_database():
    assert violations(python_files("worker"), lambda module: is_within(module, ("django",) + CONTROL_PLANE)) == []


def test_the_control_plane_imports_from_worker_only_the_shared_modules():
    def forbidden(module):
        if not is_within(module, ("worker",)) or module == "worker":
            return False
        # `from worker.trainer.config import TrainingConfig` also yields `...config.TrainingConfig`.
        return module not in ALLOWED_FROM_WORKER and module.rsplit(".", 1)[0] not in ALLOWED_FROM_WORKER

    assert violations(python_files(*CONTROL_PLANE), forbidden) == []


def channel_layer_sends(source: str) -> int:
    """Sends through a channel layer: any use of `group_send` (called, or passed along as in
    `async_to_sync(layer.group_send)`), and `.send` on a consumer's `channel_layer`."""
    def is_send(node):
        if not isinstance(node, ast.Attribute):
            return False
        on_consumer_layer = isinstance(node.value, ast.Attribute) and node.value.attr == "channel_layer"
        return node.attr == "group_send" or (node.attr == "send" and on_consumer_layer)

    return sum(1 for node in ast.walk(ast.parse(source)) if is_send(node))


def test_only_the_events_module_sends_to_the_channel_layer():
    senders = [relative(path) for path in python_files("runs", "controlplane", "worker")
               if channel_layer_sends(path.read_text())]
    assert senders == [CHANNEL_LAYER_OWNER]


@pytest.mark.parametrize("source, expected", [
    ("import django.db\n", ["django.db"]),
    ("def f():\n    from runs.models import Run\n", ["runs.models", "runs.models.Run"]),
    ("from . import sibling\n", []),
])
def test_the_scan_finds_imports_anywhere_in_a_module(source, expected):
    assert imported_modules(source) == expected


def test_the_scan_sees_a_send_through_the_channel_layer_outside_the_events_module():
    source = ("from channels.layers import get_channel_layer\n"
              "def shout(group):\n    async_to_sync(get_channel_layer().group_send)(group, {})\n")
    assert channel_layer_sends(source) == 1
    assert channel_layer_sends("def subscribe(self):\n    self.channel_layer.group_add('g', 'c')\n") == 0
