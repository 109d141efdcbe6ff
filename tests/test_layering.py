"""The layering rules of docs/architecture.md, checked by scanning imports with `ast`.

- worker/trainer/ runs on a GPU node from a JSON spec: no Django, Celery, Channels or DRF,
  nothing from the control plane, and nothing from the Celery side of worker/;
- worker/ (the Celery side) never touches the database: no Django, no `runs`;
- the control plane imports from worker/ only the schemas both sides share and the few
  modules it is meant to use (ALLOWED_FROM_WORKER); the trainer's behaviour (dry runs, checks,
  catalogs) only through one door, worker/trainer/for_control_plane/, light to import;
- only runs/live/events.py sends to the channel layer.
"""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FRAMEWORKS = ("django", "celery", "channels", "channels_redis", "rest_framework", "drf_spectacular")
CONTROL_PLANE = ("runs", "controlplane")
TRAINER_DOOR = "worker.trainer.for_control_plane"
# The schemas both sides share: the trainer may not import Django, so they live on its side.
SHARED_SCHEMAS = {
    "worker.trainer.config": "the training config schema, with its presets and alarms",
    "worker.trainer.spec": "the launch spec a started run freezes",
    "worker.trainer.events": "the event schema of the ingest",
    "worker.trainer.checkpoints.manifest": "what an uploaded checkpoint holds, checked before it is listed",
    "worker.trainer.models.paths": "where a model name resolves under DATA_DIR, and which names a run may give",
    "worker.trainer.hub_ids": "what a dataset's hub id may be (a name, never a path), checked before it is saved",
    "worker.trainer.metric_names": "the names of the metrics the trainer reports, read by the alarms, the diagnosis, "
                                   "the pages and the charts (generated into frontend/static/js/metric_names.js)",
}
# What runs/ and controlplane/ may import from worker/, and why.
ALLOWED_FROM_WORKER = {
    "worker.broker": "the queue names and the Celery settings both sides must agree on",
    "worker.announcement": "what a live worker answers when the control plane asks the fleet",
    "worker.devices": "a worker's devices as it announces them (GPUs, CPU cores, RAM)",
    "worker.cluster_view": "a Ray pool's machines as its worker announces them (the Workers page, the creation check)",
    "worker.placement.plan": "what a run asks of one machine of a Ray cluster, checked when the run is created",
    **SHARED_SCHEMAS,
    TRAINER_DOOR: "the trainer's behaviour the control plane uses: dry runs (sandbox, episodes, judges and "
                  "reward models, a served judge's vLLM), source and machine checks, the catalogs shown as forms",
}
# Never loaded by importing the door: the web process imports it at start-up.
HEAVY_MODULES = ("torch", "vllm", "transformers", "peft")
CHANNEL_LAYER_OWNER = "runs/live/events.py"


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


def is_allowed_from_worker(module: str) -> bool:
    # `from worker.trainer.config import TrainingConfig` also yields `...config.TrainingConfig`.
    return (module in ALLOWED_FROM_WORKER or module.rsplit(".", 1)[0] in ALLOWED_FROM_WORKER
            or is_within(module, (TRAINER_DOOR,)))


def test_the_control_plane_imports_from_worker_only_the_shared_modules():
    def forbidden(module):
        return is_within(module, ("worker",)) and module != "worker" and not is_allowed_from_worker(module)

    assert violations(python_files(*CONTROL_PLANE), forbidden) == []


def test_the_control_plane_reaches_trainer_behaviour_only_through_its_door():
    def forbidden(module):
        return (is_within(module, ("worker.trainer",)) and not is_within(module, (TRAINER_DOOR,))
                and module not in SHARED_SCHEMAS and module.rsplit(".", 1)[0] not in SHARED_SCHEMAS)

    assert violations(python_files(*CONTROL_PLANE), forbidden) == []


def is_within_any(package: str, modules) -> bool:
    return any(is_within(module, (package,)) for module in modules)


def test_each_module_the_control_plane_may_import_from_worker_is_imported():
    """An entry nothing imports any more is taken off the list, so that the list stays the truth."""
    imported = {module for path in python_files(*CONTROL_PLANE) for module in imported_modules(path.read_text())}
    unused = [entry for entry in ALLOWED_FROM_WORKER if not is_within_any(entry, imported)]
    assert unused == []


def door_modules() -> list[str]:
    folder = ROOT / TRAINER_DOOR.replace(".", "/")
    return [TRAINER_DOOR] + [f"{TRAINER_DOOR}.{path.stem}" for path in sorted(folder.glob("*.py"))
                             if path.stem != "__init__"]


def test_the_door_opens_without_torch_vllm_or_transformers():
    """Every module of the door, served_models included, imported in a fresh interpreter."""
    script = ("import importlib, sys\n"
              f"for name in {door_modules()!r}: importlib.import_module(name)\n"
              f"print(sorted(name for name in {HEAVY_MODULES!r} if name in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"


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


# --- views are entry points, never libraries -------------------------------------------------
def module_of(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_urls_module(path: Path) -> bool:
    return path.name == "urls.py" or path.name.endswith("_urls.py")


def is_named_as_views(module: str) -> bool:
    return "views" in module.split(".")


def view_modules() -> set[str]:
    """Every `views` module or package of a domain, and each module a urls module routes to."""
    ours = {module_of(path) for path in python_files(*CONTROL_PLANE) if path.name != "__init__.py"}
    routed = {module for path in python_files(*CONTROL_PLANE) if is_urls_module(path)
              for module in imported_modules(path.read_text())}
    return {module for module in ours if is_named_as_views(module)} | (routed & ours)


def view_import_violations() -> list[tuple[str, str]]:
    """(file, module) for each import of a view module by a module that is not a urls module."""
    views = view_modules()
    found = []
    for path in python_files(*CONTROL_PLANE):
        if is_urls_module(path):
            continue
        for module in imported_modules(path.read_text()):
            viewed = next((view for view in views if is_within(module, (view,))), None)
            if viewed is not None and viewed != module_of(path) and (relative(path), viewed) not in found:
                found.append((relative(path), viewed))
    return found


def test_views_are_imported_by_urls_modules_only():
    """A view module (a domain's views, a page module a urls module routes to) is an entry point:
    what another module needs from it (a token check, a checkpoint's files, a query) lives in a
    module that is not a view, so that a background task never imports a view and its Http404.
    Page helpers (forms, choices) are modules of their own beside the pages."""
    found = view_import_violations()
    assert found == [], ("a view module is imported as a library; move what is shared into a module that is "
                         "not a view (a module of the domain beside its views, a page helper) and import it "
                         f"from there: {found}")

