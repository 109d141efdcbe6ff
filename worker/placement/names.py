"""The names both sides of a Ray pool agree on: a run's placement group, a machine.

The Celery side names a run's placement group; the cluster probe reads the names back to
tell which runs hold which nodes, so the format lives here, in one place.
"""
import re

NAMESPACE = "grpo"
MACHINE_LABEL = "grpo-machine"

_GROUP = re.compile(r"grpo-run-(\d+)-a(\d+)")


def placement_group_name(run_id: int, attempt: int) -> str:
    """The placement group of one attempt of a run: `grpo-run-<run_id>-a<attempt>`."""
    if run_id < 1 or attempt < 1:
        raise ValueError(f"a placement group needs a run id and an attempt >= 1, got {run_id} and {attempt}")
    return f"grpo-run-{run_id}-a{attempt}"


def run_of_placement_group(name: str) -> tuple[int, int] | None:
    """(run id, attempt) of a group named by `placement_group_name`; None for anyone else's group."""
    found = _GROUP.fullmatch(name or "")
    return (int(found.group(1)), int(found.group(2))) if found else None


def machine_name(node: dict) -> str:
    """A machine's name from one entry of `ray.nodes()`.

    The `grpo-machine` label (`ray start --labels=grpo-machine=<name>`) wins: two nodes on one
    host share its hostname and address, and only a label tells them apart.
    """
    label = (node.get("Labels") or {}).get(MACHINE_LABEL, "").strip()
    return label or str(node.get("NodeManagerHostname") or node.get("NodeManagerAddress") or "unknown")
