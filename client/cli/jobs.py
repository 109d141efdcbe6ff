"""Waiting on the command line for work the control plane does in the background (a model-played
dry run, a push to the Hub, a large upload's check): its status on stderr as it changes, its
result (or why it failed) at the end."""
from collections.abc import Callable

from client.cli.output import say
from client.session import Json
from client.waiting import follow


class JobFailed(Exception):
    """The control plane took the work on and it failed; the message is its reason."""


def follow_dry_run(look: Callable[[], Json], every_s: float = 1.0) -> Json:
    """A queued dry run (a judge's, a reward model's, a model-played episode) followed to its result."""
    ended = follow(look, lambda job: job["state"] in ("done", "failed"),
                   lambda job: f"dry run {job['id']}: {job['progress']}", say, every_s)
    if ended["state"] == "failed":
        raise JobFailed(f"dry run {ended['id']} failed: {ended.get('error') or 'no reason given'}")
    return ended["result"]
