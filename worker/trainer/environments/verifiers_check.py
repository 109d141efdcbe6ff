"""Whether a verifiers environment id can be used here: the package, then the environment's module.

verifiers loads an environment id by importing the module named like it ("vf-math" → vf_math,
"owner/name" → name) and calling its load_environment(). The check stops short of that call: it
may download a dataset, which is the worker's business, not a web request's.
"""
import importlib.util
import re

ID = re.compile(r"^(?:[A-Za-z0-9][\w.-]*/)?[A-Za-z_][\w-]*$")


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def module_name(verifiers_id: str) -> str:
    return verifiers_id.rsplit("/", 1)[-1].replace("-", "_")


def verifiers_problem(verifiers_id: str, where: str = "where the control plane runs") -> str | None:
    """Why `verifiers_id` cannot be loaded `where`, or None when it can be found."""
    if not ID.match(verifiers_id or ""):
        return f"{verifiers_id!r} is not a verifiers environment id (such as vf-math or owner/vf-math)"
    if not installed("verifiers"):
        return (f"the verifiers package is not installed {where}, so environment {verifiers_id!r} cannot be "
                "loaded; install verifiers and the environment (pip install verifiers, then vf-install "
                f"{verifiers_id}) in the control plane's and the workers' Python")
    name = module_name(verifiers_id)
    if not installed(name):
        return (f"verifiers is installed {where}, but environment {verifiers_id!r} is not (no module {name!r}); "
                f"install it with vf-install {verifiers_id}")
    return None
