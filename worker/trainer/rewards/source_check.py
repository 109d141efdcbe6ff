"""Static checks of user reward code: it must parse and define `reward(prompts, completions, **columns)`.

Only reads the source; running it is the sandbox's job.
"""
import ast

ENTRY_POINT = "reward"
SIGNATURE = "def reward(prompts, completions, **columns) -> list[float | None]"


def source_problems(source: str) -> list[str]:
    """Messages that point at the line to fix; empty when the source is acceptable."""
    tree, problems = parsed(source, SIGNATURE)
    if tree is None:
        return problems
    function = last_definition(tree, ENTRY_POINT)
    if function is None:
        return [f"no top-level function named {ENTRY_POINT!r}; define " + SIGNATURE]
    if isinstance(function, ast.AsyncFunctionDef):
        return [f"line {function.lineno}: reward must be a plain function (def), not async def"]
    return _signature_problems(function)


def parsed(source: str, signature: str) -> tuple[ast.Module | None, list[str]]:
    """The module, or None and why it cannot be read (environment code is checked the same way)."""
    if not source.strip():
        return None, ["the code is empty; define " + signature]
    try:
        return ast.parse(source), []
    except SyntaxError as exc:
        where = f"line {exc.lineno}: " if exc.lineno else ""
        return None, [f"{where}syntax error: {exc.msg}"]
    except (RecursionError, MemoryError):
        # The parser gives up on very deeply nested expressions (a few thousand levels).
        return None, ["the code is nested too deeply to parse; split long expressions into several statements"]


def last_definition(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The top-level function of that name that Python would keep (the last one)."""
    definitions = [node for node in tree.body
                   if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name]
    return definitions[-1] if definitions else None


def _signature_problems(function: ast.FunctionDef) -> list[str]:
    args = function.args
    positional = [a.arg for a in args.posonlyargs + args.args]
    problems = []
    if positional[:2] != ["prompts", "completions"]:
        problems.append(f"line {function.lineno}: the first two parameters must be (prompts, completions), "
                        f"found ({', '.join(positional) or 'none'})")
    if args.kwarg is None:
        problems.append(f"line {function.lineno}: add **columns to receive the dataset's other columns")
    return problems
