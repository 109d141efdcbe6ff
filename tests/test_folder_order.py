"""The trainer's packages in one direction: each imports only packages of a lower layer.

TRAINER_LAYERS is the order (docs/architecture.md copies it), bottom first; a unit is a package
of worker/trainer/ or one of its root modules. An import is read with `ast` wherever it stands
(inside functions too, since it runs when called), but not under `if TYPE_CHECKING:` (never
runs). A unit importing one of its own layer or a higher one fails, naming file and import; a
folder-level circle always does, since one of its edges points up. A new package or root module
must be placed in a layer. An edge left in place is an EXCEPTION, with why: a fix someone owes.
"""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRAINER = ROOT / "worker" / "trainer"
PREFIX = "worker.trainer"

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

# (file, unit it imports) -> why the upward edge stays. Each is a fix someone owes.
EXCEPTIONS: dict[tuple[str, str], str] = {}


def layer_of() -> dict[str, int]:
    return {unit: index for index, layer in enumerate(TRAINER_LAYERS) for unit in layer}


def unit_of_file(path: Path) -> str:
    parts = path.relative_to(TRAINER).parts
    return parts[0] if len(parts) > 1 else path.stem


def unit_of_module(module: str) -> str | None:
    """The trainer's unit a dotted module name is in; None outside the trainer or for its package."""
    parts = module.split(".")
    if parts[:2] != PREFIX.split(".") or len(parts) < 3:
        return None
    return parts[2]


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


def imported_modules(node: ast.Import | ast.ImportFrom, path: Path) -> list[str]:
    """Dotted names an import statement reaches: `from worker.trainer import x` reaches x."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        package = list(path.relative_to(ROOT).with_suffix("").parts[:-1])
        base = ".".join(package[:len(package) - (node.level - 1)] + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    return [base] + [f"{base}.{alias.name}" for alias in node.names] if base == PREFIX else [base]


def trainer_edges():
    """(file, line, unit, imported unit, module) for each import of another unit of the trainer."""
    for path in sorted(TRAINER.rglob("*.py")):
        unit = unit_of_file(path)
        for node in import_nodes(ast.parse(path.read_text(), filename=str(path))):
            for module in imported_modules(node, path):
                target = unit_of_module(module)
                if target is not None and target != unit:
                    yield str(path.relative_to(ROOT)), node.lineno, unit, target, module


def upward_edges() -> list[str]:
    layers = layer_of()
    return [f"{file}:{line}: {unit} (layer {layers[unit]}) imports {module} ({target}, layer {layers[target]})"
            for file, line, unit, target, module in trainer_edges()
            if unit in layers and target in layers and layers[target] >= layers[unit]
            and (file, target) not in EXCEPTIONS]


def trainer_units() -> set[str]:
    packages = {path.parent.name for path in TRAINER.glob("*/__init__.py")}
    modules = {path.stem for path in TRAINER.glob("*.py") if path.stem != "__init__"}
    return packages | modules


def test_each_trainer_package_imports_only_lower_layers():
    assert upward_edges() == [], "imports against the order of TRAINER_LAYERS (move the shared piece down, " \
                                 "or turn the dependency around):\n" + "\n".join(upward_edges())


def test_every_package_and_root_module_of_the_trainer_has_a_layer():
    listed = [unit for layer in TRAINER_LAYERS for unit in layer]
    assert sorted(trainer_units() - set(listed)) == [], "place each in a layer of TRAINER_LAYERS"
    assert sorted(set(listed) - trainer_units()) == [], "take units that are gone off TRAINER_LAYERS"
    assert len(listed) == len(set(listed)), "a unit sits in one layer"


def test_every_exception_is_still_an_upward_import_so_a_fixed_one_leaves_the_list():
    layers = layer_of()
    upward = {(file, target) for file, _, unit, target, _ in trainer_edges() if layers[target] >= layers[unit]}
    assert sorted(set(EXCEPTIONS) - upward) == []


def test_an_import_inside_a_function_counts_and_one_under_type_checking_does_not():
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from worker.trainer.app import A\n"
              "def later():\n    from worker.trainer import loop\n")
    path = ROOT / "worker" / "trainer" / "processes" / "example.py"
    found = [module for node in import_nodes(ast.parse(source)) for module in imported_modules(node, path)]
    assert sorted(unit_of_module(module) for module in found if unit_of_module(module)) == ["loop"]
