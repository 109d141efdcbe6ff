"""Who may write or change reward functions made of Python code.

Superusers may (Django grants them every permission, and `ensure_admin` makes the first
admin one). Anyone else needs `runs.author_reward_code`, given in the admin directly or by
adding the user to the "Reward authors" group (made by migration 0002). Everyone may create
built-in rewards, and use (dry-run, train with) the rewards they own, code included.
"""
PERMISSION = "runs.author_reward_code"
AUTHORS_GROUP = "Reward authors"


def refusal(what: str) -> str:
    return (f"writing or changing {what} needs the permission {PERMISSION!r}; ask an administrator to add "
            f"you to the {AUTHORS_GROUP!r} group. Built-in rewards need no permission.")


REFUSAL = refusal("reward code")
# Environment code runs in the same sandbox as reward code: the same permission writes it.
ENVIRONMENT_REFUSAL = refusal("reward or environment code")


def can_author_code(user) -> bool:
    return bool(user and user.is_authenticated and user.has_perm(PERMISSION))


def touches_code(data, instance=None) -> bool:
    """Whether saving `data` over `instance` (None: a new reward) writes or changes code."""
    if instance is not None and instance.kind == "code":
        return True
    kind = data.get("kind") if hasattr(data, "get") else None
    return kind == "code"
