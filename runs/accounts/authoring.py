"""Who may write or change code that runs on the workers: reward and environment code, and the
verifiers environments (loading one imports and runs its package, with the parameters given).

Superusers may (Django grants them every permission, and `ensure_admin` makes the first
admin one). Anyone else needs `runs.author_reward_code`, given in the admin directly or by
adding the user to the "Reward authors" group (made by migration 0002). Everyone may create
built-in rewards and environments, and use (dry-run, train with) the rewards they own, code
included. A verifiers environment whose id an operator lists in VERIFIERS_ENVIRONMENTS_ALLOWED
needs no permission: the operator vouches for that package.
"""
from django.conf import settings
from django.core.exceptions import PermissionDenied

PERMISSION = "runs.author_reward_code"
AUTHORS_GROUP = "Reward authors"
ALLOW_LIST_SETTING = "VERIFIERS_ENVIRONMENTS_ALLOWED"


def refusal(what: str) -> str:
    return (f"writing or changing {what} needs the permission {PERMISSION!r}; ask an administrator to add "
            f"you to the {AUTHORS_GROUP!r} group. Built-in rewards need no permission.")


REFUSAL = refusal("reward code")
# Environment code runs in the same sandbox as reward code: the same permission writes it.
ENVIRONMENT_REFUSAL = refusal("reward or environment code")


class NotPermitted(PermissionDenied):
    """A refusal with its reason: the API answers 403 with it as `detail`."""


def can_author_code(user) -> bool:
    return bool(user and user.is_authenticated and user.has_perm(PERMISSION))


def touches_code(data, instance=None) -> bool:
    """Whether saving `data` over `instance` (None: a new reward) writes or changes code."""
    if instance is not None and instance.kind == "code":
        return True
    kind = data.get("kind") if hasattr(data, "get") else None
    return kind == "code"


def reward_refusal(user, data, instance=None) -> str | None:
    """Why `user` may not save `data` over the reward `instance` (None: a new one), or None."""
    return REFUSAL if touches_code(data, instance) and not can_author_code(user) else None


# --- verifiers environments ------------------------------------------------------------------
def verifiers_refusal(verifiers_id) -> str:
    return (f"verifiers environment {verifiers_id!r} imports and runs its package's code on the workers: using "
            f"it needs the permission {PERMISSION!r} (ask an administrator to add you to the {AUTHORS_GROUP!r} "
            f"group), or an operator listing its id in the setting {ALLOW_LIST_SETTING}")


def may_load_verifiers(user, verifiers_id) -> bool:
    return verifiers_id in settings.VERIFIERS_ENVIRONMENTS_ALLOWED or can_author_code(user)


def _saved(data, instance, field: str):
    """`field` as saving `data` over `instance` leaves it: the value given, else the stored one."""
    value = data.get(field) if hasattr(data, "get") else None
    if value is None:
        return getattr(instance, field, None) if instance is not None else None
    return value.strip() if isinstance(value, str) else value


def verifiers_id_saved(data, instance=None):
    """The verifiers id an environment loads once `data` is saved over `instance` (None: a new
    one); None when it will not be a verifiers environment."""
    if _saved(data, instance, "kind") != "verifiers":
        return None
    return _saved(data, instance, "verifiers_id") or ""


def environment_refusal(user, data, instance=None) -> str | None:
    """Why `user` may not save `data` over the environment `instance` (None: a new one), or None:
    code needs the permission; a verifiers environment needs it too unless its id is allowed."""
    if touches_code(data, instance) and not can_author_code(user):
        return ENVIRONMENT_REFUSAL
    verifiers_id = verifiers_id_saved(data, instance)
    if verifiers_id is not None and not may_load_verifiers(user, verifiers_id):
        return verifiers_refusal(verifiers_id)
    return None


def dataset_refusal(user, data, instance=None) -> str | None:
    """A verifiers environment's rows (source environment) are loaded by running it: the same rule."""
    if _saved(data, instance, "source") != "environment":
        return None
    verifiers_id = _saved(data, instance, "hub_id") or ""
    return None if may_load_verifiers(user, verifiers_id) else verifiers_refusal(verifiers_id)


def verifiers_ids_loaded(environment, *datasets) -> list[str]:
    """The verifiers environments a run on these would load: its environment's, and its datasets'
    when one is a verifiers environment's rows (Dataset.Source.ENVIRONMENT, the id in hub_id)."""
    ids = [environment.verifiers_id] if environment is not None and environment.kind == "verifiers" else []
    return ids + [dataset.hub_id for dataset in datasets if dataset is not None and dataset.source == "environment"]


def run_refusal(user, data, instance=None) -> str | None:
    """Why `user` may not save `data` over the run `instance` (None: a new one), or None."""
    loaded = verifiers_ids_loaded(*(_saved(data, instance, f) for f in ("environment", "dataset", "eval_dataset")))
    refused = [verifiers_id for verifiers_id in loaded if not may_load_verifiers(user, verifiers_id)]
    return verifiers_refusal(refused[0]) if refused else None


def check_run_may_start(run) -> None:
    """Raises NotPermitted unless the run's owner may load each verifiers environment it names.
    Checked at every start and resume, so that an environment or dataset saved before this rule,
    or a run cloned from someone else's, cannot load one on the owner's behalf."""
    if refusal := run_refusal(run.owner, {}, run):
        raise NotPermitted(f"run {run.pk} cannot start: {refusal}")
