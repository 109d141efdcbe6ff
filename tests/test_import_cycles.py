"""No import circles among the repository's own modules, found by reading their imports with `ast`.

A circle makes the order modules load in matter, and an import hidden inside a function only
postpones it: imports inside functions count here. Imports under `if TYPE_CHECKING:` do not,
because they never run (annotations are strings to the interpreter); they are how a module names
a type without loading its module. Edges are what an import statement names:

- `import a.b` leads to `a.b`;
- `from a.b import c` leads to `a.b`, where `c` is looked up first, and to `a.b.c` as well when
  that is a module of ours.

So a package whose `__init__` re-exports its submodules is in a circle when one of them takes
anything from the package itself (`from package import sibling` included): import the sibling
module by its own name instead.
"""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The repository's own Python. `grpo` at the root is a shell script that runs `client`:
# nothing of its own to read.
PACKAGES = ("worker", "runs", "controlplane", "client", "scripts", "bench")

# Circles left in place, by their modules, with why. Each is a fix someone owes: do not add to it.
ALLOWED_CIRCLES: dict[frozenset[str], str] = {}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules_of_ours() -> dict[str, Path]:
    return {module_name(path): path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))}


def is_type_checking_block(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def import_nodes(tree: ast.AST):
    """Every import statement that runs, at any depth (functions included), skipping the bodies
    of `if TYPE_CHECKING:` (their `else:` runs, so it is read)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        children = node.orelse if is_type_checking_block(node) else list(ast.iter_child_nodes(node))
        stack.extend(children)


def absolute_base(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The module a `from` import names, with a relative one resolved against `module`."""
    if node.level == 0:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[:len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: str, path: Path, ours: dict[str, Path]) -> set[str]:
    """The modules of ours that `module`'s import statements name (see the module's docstring)."""
    found = set()
    for node in import_nodes(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
            continue
        base = absolute_base(node, module, path.name == "__init__.py")
        found |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    # Importing a.b.c runs a's and a.b's __init__ first: an edge to each, but for the packages
    # `module` is inside (already running when it is imported).
    found |= {parent for name in found for parent in enclosing_packages(name) if not module.startswith(parent + ".")}
    return {name for name in found if name in ours and name != module}


def enclosing_packages(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts))]


def import_graph() -> dict[str, set[str]]:
    ours = modules_of_ours()
    return {module: imports_of(module, path, ours) for module, path in ours.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative:
    the graph is deeper than Python's recursion limit allows for)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def test_the_repositorys_modules_import_each_other_in_no_circle():
    unexplained = [" <-> ".join(circle) for circle in circles(import_graph())
                   if frozenset(circle) not in ALLOWED_CIRCLES]
    assert unexplained == [], "import circles (move the shared piece into a module of its own, or turn " \
                              "the dependency around):\n" + "\n".join(unexplained)


def test_every_allowed_circle_still_exists_so_a_fixed_one_leaves_the_list():
    found = {frozenset(circle) for circle in circles(import_graph())}
    assert [sorted(circle) for circle in ALLOWED_CIRCLES if circle not in found] == []


def test_a_circle_through_an_import_inside_a_function_is_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]


def test_a_circle_through_a_packages_init_is_found(tmp_path):
    """x imports pkg.sub, which runs pkg/__init__.py first, which takes a name from x."""
    (tmp_path / "x.py").write_text("import pkg.sub\nthing = 1\n")
    ours = {"x": tmp_path / "x.py", "pkg": tmp_path, "pkg.sub": tmp_path}
    assert imports_of("x", tmp_path / "x.py", ours) == {"pkg", "pkg.sub"}
    assert circles({"x": {"pkg", "pkg.sub"}, "pkg": {"x"}, "pkg.sub": set()}) == [["pkg", "x"]]


def test_an_import_under_type_checking_is_no_edge_and_one_in_a_function_is(tmp_path):
    (tmp_path / "pkg").mkdir()
    source = tmp_path / "pkg" / "one.py"
    source.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import two\n"
                      "else:\n    import pkg.three\n\ndef later():\n    from pkg.four import thing\n")
    ours = {name: tmp_path for name in ("pkg", "pkg.one", "pkg.two", "pkg.three", "pkg.four")}
    assert imports_of("pkg.one", source, ours) == {"pkg.three", "pkg.four"}


def test_a_name_taken_from_a_package_leads_to_its_init_and_a_submodule_to_both(tmp_path):
    source = tmp_path / "user.py"
    source.write_text("from pkg import Thing, sub\nfrom . import sibling\nimport other.deep\n")
    ours = {name: tmp_path for name in ("pkg", "pkg.sub", "top", "top.user", "top.sibling", "other", "other.deep")}
    # import other.deep runs other/__init__.py first: an edge to other too (top is user's own package).
    assert imports_of("top.user", source, ours) == {"pkg", "pkg.sub", "top", "top.sibling", "other", "other.deep"}
