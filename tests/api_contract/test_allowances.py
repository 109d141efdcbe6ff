"""The contract test's allowances (schemathesis.toml) stay what their header says: each entry names
operations the schema has, says why above it, and adds 400 (with 404/409 where its rules need them)
rather than taking schemathesis' defaults wholesale. Fast: no server, no schemathesis run."""
import re
import tomllib
from pathlib import Path

import pytest

ALLOWANCES = Path(__file__).with_name("schemathesis.toml")
# What an entry may list: success, the 400 it exists for, and a path's object gone or one at a time.
MAY_LIST = {"2xx", "400", "404", "409"}


def entries() -> list[dict]:
    return tomllib.loads(ALLOWANCES.read_text())["operations"]


@pytest.fixture
def schema_operations(owner_api) -> set[str]:
    schema = owner_api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    return {f"{method.upper()} {path}" for path, operations in schema["paths"].items() for method in operations}


def test_every_allowance_names_operations_the_schema_has(schema_operations):
    named = [name for entry in entries() for name in entry["include-name"]]
    assert set(named) <= schema_operations, set(named) - schema_operations


def test_no_operation_is_named_by_two_allowances():
    named = [name for entry in entries() for name in entry["include-name"]]
    assert len(named) == len(set(named)), sorted(name for name in named if named.count(name) > 1)


def test_every_allowance_adds_400_and_nothing_the_user_could_be_refused_at_the_door():
    for entry in entries():
        statuses = set(entry["checks"]["positive_data_acceptance"]["expected-statuses"])
        assert {"2xx", "400"} <= statuses <= MAY_LIST, entry["include-name"]


def test_every_allowance_says_why_or_shares_the_reason_above_it():
    """An entry without a comment of its own is the same resource's, under the comment before."""
    explained = None
    for block in entry_blocks():
        if block.startswith("#"):
            explained = block
        else:
            assert explained is not None and resource_of(explained) == resource_of(block), block


def entry_blocks() -> list[str]:
    blocks = re.split(r"\n\s*\n", ALLOWANCES.read_text())
    return [block.strip() for block in blocks if "[[operations]]" in block]


def resource_of(block: str) -> str:
    return re.search(r'"[A-Z]+ /api/([^/]+)/', block).group(1)
