"""Static checks of environment code before it is saved: it must parse and define
`step(messages, row)`; `start(row)` and `TOOLS` are optional. Only reads the source; running it is
the sandbox's job (worker/trainer/rewards/sandbox/), which checks TOOLS again as it loads."""
import ast

from worker.trainer.rewards.source_check import last_definition, parsed

SIGNATURE = "def step(messages, row) -> None | str | dict | list[dict]"


def source_problems(source: str) -> list[str]:
    """Messages that point at the line to fix; empty when the source is acceptable."""
    tree, problems = parsed(source, SIGNATURE)
    if tree is None:
        return problems
    step = last_definition(tree, "step")
    if step is None:
        return ["no top-level function named 'step'; define " + SIGNATURE]
    problems = _function_problems(step, ["messages", "row"])
    start = last_definition(tree, "start")
    if start is not None:
        problems += _function_problems(start, ["row"])
    return problems + _tools_problems(tree)


def _function_problems(function, parameters: list[str]) -> list[str]:
    wanted = f"{function.name}({', '.join(parameters)})"
    if isinstance(function, ast.AsyncFunctionDef):
        return [f"line {function.lineno}: {function.name} must be a plain function (def), not async def"]
    args = function.args
    positional = args.posonlyargs + args.args
    required = len(positional) - len(args.defaults)
    takes = args.vararg is not None or len(positional) >= len(parameters)
    required_keywords = [a for a, default in zip(args.kwonlyargs, args.kw_defaults) if default is None]
    if not takes or required > len(parameters) or required_keywords:
        found = ", ".join(a.arg for a in positional) or "none"
        return [f"line {function.lineno}: {function.name} is called as {wanted}; its parameters are ({found})"]
    return []


def _tools_problems(tree: ast.Module) -> list[str]:
    """TOOLS written as a dict literal is checked here, with its line; anything computed is checked on load."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TOOLS" for t in node.targets):
            value = node.value
            if isinstance(value, (ast.List, ast.Tuple, ast.Set, ast.Constant)):
                return [f"line {node.lineno}: TOOLS is a dict of tool name → description"]
            if isinstance(value, ast.Dict):
                return [problem for key in value.keys if (problem := _tool_name_problem(key))]
    return []


def _tool_name_problem(key) -> str | None:
    if isinstance(key, ast.Constant) and not (isinstance(key.value, str) and key.value.isidentifier()):
        return f"line {key.lineno}: TOOLS: {key.value!r} is not a tool name (letters, digits and _)"
    return None
