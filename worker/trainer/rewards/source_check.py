"""Static checks of user reward code: it must parse and define `reward(prompts, completions, **columns)`.

Only reads the source; running it is the sandbox's job.
"""
import ast

ENTRY_POINT = "reward"
SIGNATURE = "def reward(prompts, completions, **columns) -> list[float | None]"


def source_problems(source: str) -> list[str]:
    """Messages that point at the line to fix; empty when the source is acceptable."""
    if not source.strip():
        return ["the code is empty; define " + SIGNATURE]
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [f"line {exc.lineno}: syntax error: {exc.msg}"]
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == ENTRY_POINT]
    if not functions:
        return [f"no top-level function named {ENTRY_POINT!r}; define " + SIGNATURE]
    return _signature_problems(functions[-1])


def _signature_problems(function: ast.FunctionDef) -> list[str]:
    args = function.args
    positional = [a.arg for a in args.posonlyargs + args.args]
    problems = []
    if positional[:2] != ["prompts", "completions"]:
        problems.append(f"line {function.lineno}: the first two parameters must be (prompts, completions), "
                        f"found ({', '.join(positional) or 'none'})")
    required_extra = len(positional) - 2 - len(args.defaults)
    if required_extra > 0:
        problems.append(f"line {function.lineno}: parameters after completions need defaults; "
                        "dataset columns arrive as keyword arguments")
    if args.kwarg is None:
        problems.append(f"line {function.lineno}: add **columns to receive the dataset's other columns")
    return problems
