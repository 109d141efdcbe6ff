"""Folders in one direction: in the trainer and in the control plane, each unit imports only units
of a lower layer.

A TREE's LAYERS are its order (docs/architecture.md copies both), bottom first. In the trainer a
unit is a package of worker/trainer/ or one of its root modules; in the control plane a unit is a
domain package of runs/ or a root module, except that every domain's `models` (and runs/models.py,
which gathers them for Django) form one unit, `records`, at the bottom. An import is read with `ast`
wherever it stands (inside functions too), but not under `if TYPE_CHECKING:`. An import of the
unit's own layer or a higher one fails, naming file and import; a folder-level circle always does.
A new unit must be placed in a layer. An edge left in place is an EXCEPTION, with why.
"""
import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TRAINER_LAYERS: list[tuple[str, ...]] = [
    # Records and process plumbing that know nothing of a run's parts.
    ("hub_ids", "events", "metric_names", "spec_errors", "lifecycle", "processes"),
    # The config schema the control plane shares: fields, GPU layout, presets.
    ("config",),
    # What a run is given and the plain pieces read from it: the launch spec, models, GRPO's
    # mathematics, reports to the control plane, groups of completions and their scoring.
    ("spec", "models", "algorithm", "reporting", "rollout"),
    # Several processes: topology, strategy, sharding, the leader's orders.
    ("distributed",),
    # A model's weights whole: unique state dict, gathered from shards, streamed to safetensors.
    ("weights",),
    # One training step and what it is built from (precision included).
    ("training",),
    # The vLLM server and the trainer's clients of it (completions, admin endpoints).
    ("inference",),
    # What uses the server and the policy: weight pushes, rewards and judges, checkpoints,
    # the checks of a config against this machine's model.
    ("weight_sync", "rewards", "checkpoints", "machine_checks"),
    # Multi-turn episodes (rewards inside them), then datasets (verifiers' datasets).
    ("environments",),
    ("data",),
    # Held-out evaluation; the control plane's door onto the trainer's behaviour.
    ("evaluation", "for_control_plane"),
    # A run: start-up, then the loop and the followers, then the program.
    ("startup",),
    ("loop", "follower"),
    ("app",),
    ("__main__",),
]

CONTROL_PLANE_LAYERS: list[tuple[str, ...]] = [
    # Where files are kept (a disk, a bucket): bytes, no rows.
    ("artifacts",),
    # Every domain's models: the tables, related by name ("runs.Run"), so they need no order.
    ("records",),
    # Who asks and what they own; the control plane's own queue; the workers it can see.
    ("accounts", "background", "fleet"),
    # What every domain's API and pages share; the live channel; the machinery of dry runs.
    ("web", "live", "dry_runs"),
    # What a run reports and what is kept of it.
    ("telemetry", "alarms", "checkpoints"),
    # What reads those reports (diagnosis, the ingest that stores them, Hub pushes); configs.
    ("configs", "diagnosis", "hub", "ingest"),
    # The library a run is made from, each on the one below: datasets, rewards, environments
    # (the demos' library makes all three; the comparison reads datasets' launch specs).
    ("datasets",),
    ("rewards", "demos", "compare"),
    ("environments", "evaluation"),
    # A run, made of all of the above: its record's life, its API, its pages.
    ("training_runs",),
    # The site: URL lists, the request guard, the home page, the admin, commands, the app.
    ("site", "admin", "apps", "management"),
]


@dataclass(frozen=True)
class Tree:
    """One tree whose units are ordered: where it lives, how files and modules name their unit."""
    folder: Path
    prefix: str
    layers: list[tuple[str, ...]]
    records: str | None = None  # the name every `models` module and package is counted under
    root: Path = ROOT  # the folder dotted names start from

    def unit_of_parts(self, parts: tuple[str, ...]) -> str | None:
        if not parts or parts[-1] == "__init__" and len(parts) == 1:
            return None
        if self.records and (parts[0] == "models" or (len(parts) > 1 and parts[1] == "models")):
            return self.records
        return parts[0]

    def unit_of_file(self, path: Path) -> str | None:
        return self.unit_of_parts(path.relative_to(self.folder).with_suffix("").parts)

    def unit_of_module(self, module: str) -> str | None:
        """The unit a dotted module name is in; None outside the tree or for its package."""
        parts, prefix = tuple(module.split(".")), tuple(self.prefix.split("."))
        return self.unit_of_parts(parts[len(prefix):]) if parts[:len(prefix)] == prefix else None

    def files(self) -> list[Path]:
        return sorted(path for path in self.folder.rglob("*.py") if "migrations" not in path.parts
                      and self.unit_of_file(path) is not None)

    def units(self) -> set[str]:
        return {unit for path in self.files() if (unit := self.unit_of_file(path))}

    def layer_of(self) -> dict[str, int]:
        return {unit: index for index, layer in enumerate(self.layers) for unit in layer}


TRAINER = Tree(ROOT / "worker" / "trainer", "worker.trainer", TRAINER_LAYERS)
CONTROL_PLANE = Tree(ROOT / "runs", "runs", CONTROL_PLANE_LAYERS, records="records")
TREES = (TRAINER, CONTROL_PLANE)

# (file, unit it imports) -> why the upward edge stays. Each is a fix someone owes.
EXCEPTIONS: dict[tuple[str, str], str] = {}


def is_type_checking_block(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def import_nodes(tree: ast.AST):
    """Every import statement that runs, at any depth, skipping `if TYPE_CHECKING:` bodies."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(node.orelse if is_type_checking_block(node) else ast.iter_child_nodes(node))


def imported_modules(node: ast.Import | ast.ImportFrom, path: Path, prefix: str, root: Path = ROOT) -> list[str]:
    """Dotted names an import statement reaches: `from worker.trainer import x` reaches x."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        package = list(path.relative_to(root).with_suffix("").parts[:-1])
        base = ".".join(package[:len(package) - (node.level - 1)] + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    return [base] + [f"{base}.{alias.name}" for alias in node.names] if base == prefix else [base]


def edges(tree: Tree):
    """(file, line, unit, imported unit, module) for each import of another unit of the tree."""
    for path in tree.files():
        unit = tree.unit_of_file(path)
        for node in import_nodes(ast.parse(path.read_text(), filename=str(path))):
            for module in imported_modules(node, path, tree.prefix, tree.root):
                target = tree.unit_of_module(module)
                if target is not None and target != unit:
                    yield str(path.relative_to(tree.root)), node.lineno, unit, target, module


def upward_edges(tree: Tree) -> list[str]:
    layers = tree.layer_of()
    return [f"{file}:{line}: {unit} (layer {layers[unit]}) imports {module} ({target}, layer {layers[target]})"
            for file, line, unit, target, module in edges(tree)
            if unit in layers and target in layers and layers[target] >= layers[unit]
            and (file, target) not in EXCEPTIONS]


def test_each_trainer_package_imports_only_lower_layers():
    assert upward_edges(TRAINER) == [], "imports against the order of TRAINER_LAYERS (move the shared piece " \
                                        "down, or turn the dependency around):\n" + "\n".join(upward_edges(TRAINER))


def test_each_control_plane_domain_imports_only_lower_layers():
    found = upward_edges(CONTROL_PLANE)
    assert found == [], "imports against the order of CONTROL_PLANE_LAYERS (move the shared piece down, or " \
                        "turn the dependency around):\n" + "\n".join(found)


def test_every_unit_of_both_trees_has_one_layer():
    for tree in TREES:
        listed = [unit for layer in tree.layers for unit in layer]
        assert sorted(tree.units() - set(listed)) == [], f"place each in a layer of {tree.prefix}'s order"
        assert sorted(set(listed) - tree.units()) == [], f"take units that are gone off {tree.prefix}'s order"
        assert len(listed) == len(set(listed)), "a unit sits in one layer"


def test_every_exception_is_still_an_upward_import_so_a_fixed_one_leaves_the_list():
    upward = set()
    for tree in TREES:
        layers = tree.layer_of()
        upward |= {(file, target) for file, _, unit, target, _ in edges(tree) if layers[target] >= layers[unit]}
    assert sorted(set(EXCEPTIONS) - upward) == []


def test_an_import_inside_a_function_counts_and_one_under_type_checking_does_not():
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from worker.trainer.app import A\n"
              "def later():\n    from worker.trainer import loop\n")
    path = ROOT / "worker" / "trainer" / "processes" / "example.py"
    found = [module for node in import_nodes(ast.parse(source))
             for module in imported_modules(node, path, TRAINER.prefix)]
    assert sorted(TRAINER.unit_of_module(module) for module in found if TRAINER.unit_of_module(module)) == ["loop"]


def test_every_domains_models_count_as_the_records_at_the_bottom():
    assert CONTROL_PLANE.unit_of_module("runs.rewards.models.function") == "records"
    assert CONTROL_PLANE.unit_of_module("runs.models") == "records"
    assert CONTROL_PLANE.unit_of_module("runs.rewards.serializers") == "rewards"
    assert CONTROL_PLANE.unit_of_file(ROOT / "runs" / "datasets" / "models.py") == "records"


def test_a_folder_level_circle_fails(tmp_path):
    """Two domains importing each other: whatever their layers, one of the two edges points up."""
    for unit, other in (("datasets", "rewards"), ("rewards", "datasets")):
        (tmp_path / "lab" / unit).mkdir(parents=True)
        (tmp_path / "lab" / unit / "__init__.py").write_text("")
        (tmp_path / "lab" / unit / "rows.py").write_text(f"from lab.{other}.rows import x\n")
    for layers in ([("datasets",), ("rewards",)], [("rewards",), ("datasets",)]):
        tree = Tree(tmp_path / "lab", "lab", layers, records="records", root=tmp_path)
        assert len(upward_edges(tree)) == 1
