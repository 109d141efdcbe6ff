"""The leader's orders as signed JSON: what crosses torchrun's store is data, never code.

The store is a TCP server any process that reaches its port may write to, so an order is
plain JSON (no pickle: unpickling runs whatever the bytes name) and carries an HMAC-SHA256
under the run's secret (LaunchSpec.orders_secret, which the worker's supervisor writes into
the spec file every process reads). The MAC covers the order's number too, so an order
replayed under another number is refused like a forged one.
"""
import dataclasses
import hashlib
import hmac
import json
from dataclasses import dataclass, field

from worker.trainer.rollout.groups import Completion, Group

MIN_SECRET_CHARS = 32  # secrets.token_hex(32): 256 bits


class OrderRefused(RuntimeError):
    """An order that is not this run's leader's: its MAC does not verify, or it is not an order."""


@dataclass(frozen=True)
class Order:
    what: str                      # setup, train, gather, save, stop
    payload: dict = field(default_factory=dict)


def _group_as_json(group: Group) -> dict:
    if any(c.episode is not None for c in group.completions):
        raise ValueError("a group's episodes stay with the leader (crew.lean_group drops them)")
    return dataclasses.asdict(group)


def _group_from_json(data: dict) -> Group:
    completions = [Completion(**completion) for completion in data.pop("completions")]
    return Group(**data, completions=completions)


def payload_as_json(order: Order) -> dict:
    if order.what == "train":
        return {"groups": [_group_as_json(group) for group in order.payload["groups"]]}
    return dict(order.payload)


def payload_from_json(what: str, payload: dict) -> dict:
    """The payload each kind of order may carry, typed; anything else is refused."""
    expected = {"setup": {"resume_from"}, "train": {"groups"}, "gather": set(), "save": {"step"}, "stop": set()}
    if what not in expected or set(payload) != expected[what]:
        raise OrderRefused(f"not an order the leading trainer process sends: {what!r} with {sorted(payload)}")
    if what == "train":
        return {"groups": [_group_from_json(dict(group)) for group in payload["groups"]]}
    if what == "save" and not isinstance(payload["step"], int):
        raise OrderRefused(f"a save order's step must be an integer, not {payload['step']!r}")
    if what == "setup" and not isinstance(payload["resume_from"], str | None):
        raise OrderRefused(f"a setup order's resume_from must be a path or null, not {payload['resume_from']!r}")
    return payload


def _mac(secret: str, number: int, body: bytes) -> str:
    return hmac.new(secret.encode(), f"{number}\n".encode() + body, hashlib.sha256).hexdigest()


def encode_order(order: Order, number: int, secret: str) -> bytes:
    """`<hex MAC>\\n<JSON>`: what the leader puts under order/<number>."""
    body = json.dumps({"what": order.what, "payload": payload_as_json(order)}).encode()
    return _mac(secret, number, body).encode() + b"\n" + body


def decode_order(message: bytes, number: int, secret: str) -> Order:
    """The order in `message`, once its MAC verifies under `secret` for `number`; OrderRefused otherwise."""
    mac, _, body = message.partition(b"\n")
    if not hmac.compare_digest(mac, _mac(secret, number, body).encode()):
        raise OrderRefused(f"order {number} in the trainer processes' store failed its HMAC check: it was not "
                           "written by this run's leading process (or was altered); refused")
    try:
        data = json.loads(body)
        return Order(data["what"], payload_from_json(data["what"], data["payload"]))
    except (ValueError, KeyError, TypeError) as exc:  # signed but malformed: a leader of another version
        raise OrderRefused(f"order {number} from the leading trainer process is malformed: {exc}") from exc
