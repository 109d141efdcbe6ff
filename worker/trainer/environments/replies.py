"""What an environment may answer to a turn, made into chat messages.

    None                      the episode is done
    "text"                    one user message
    {"role": ..., "content"}  one message (role user or tool)
    [message, ...]            several, in order

Anything else is the environment's mistake, reported with what it was.
"""
ENVIRONMENT_ROLES = ("user", "tool")


class ReplyError(ValueError):
    """An environment answered something that is not a reply (the message says what)."""


def messages_of(reply) -> list[dict] | None:
    """The reply as messages, or None for "done"."""
    if reply is None:
        return None
    if isinstance(reply, str):
        return [{"role": "user", "content": reply}]
    if isinstance(reply, dict):
        return [_message(reply)]
    if isinstance(reply, (list, tuple)):
        if not reply:
            raise ReplyError("an empty list is no reply: answer None when the episode is done")
        return [_message(item) for item in reply]
    raise ReplyError(f"an environment answers None, text, a message or a list of messages, not {type(reply).__name__}")


def _message(item) -> dict:
    if isinstance(item, str):
        return {"role": "user", "content": item}
    if not isinstance(item, dict):
        raise ReplyError(f"a message is a dict with role and content, not {type(item).__name__}")
    role, content = item.get("role", "user"), item.get("content")
    if role not in ENVIRONMENT_ROLES:
        raise ReplyError(f"an environment's message has role user or tool, not {role!r}")
    if not isinstance(content, str):
        raise ReplyError(f"a message's content is text, not {type(content).__name__}")
    message = {"role": role, "content": content}
    if role == "tool" and isinstance(item.get("name"), str):
        message["name"] = item["name"]
    return message
