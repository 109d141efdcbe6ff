"""A live control plane whose one user may write reward code (hostile_owner's owner, given the
code-authoring permission), for the attacks made from inside the sandbox."""
from tests.support import hostile_owner

GRANT = """
import json
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from runs.accounts.authoring import AUTHORS_GROUP
get_user_model().objects.get(username="owner").groups.add(Group.objects.get(name=AUTHORS_GROUP))
print(json.dumps({}))
"""


def start(data_dir, env: dict | None = None):
    server = hostile_owner.start(data_dir, env=env)
    server.shell_json(GRANT)
    return server


def code_reward(api, name: str, source: str) -> int:
    created = api.post("/api/reward-functions/", json={"name": name, "kind": "code", "source": source})
    assert created.status_code == 201, created.text
    return created.json()["id"]


def dry_run(api, server, reward_id: int, completions: list):
    """POST the dry run: one entry of `completions` per row of the seeded dataset."""
    return api.post(f"/api/reward-functions/{reward_id}/dry-run/",
                    json={"dataset": server.seed["dataset"], "completions": completions})
