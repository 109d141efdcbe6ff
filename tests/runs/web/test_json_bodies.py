"""The JSON parser's depth bound: as deep as JSON_MAX_DEPTH is taken, one level more is a 400."""
import io
import json

import pytest
from rest_framework.exceptions import ParseError

from runs.web.json_bodies import JSON_MAX_DEPTH, BoundedJSONParser, JSONTooDeep, bounded_loads


def nested(depth: int) -> str:
    return '{"a": ' * (depth - 1) + "[1]" + "}" * (depth - 1)


def parse(text: str):
    return BoundedJSONParser().parse(io.BytesIO(text.encode()), "application/json", {})


def test_as_deep_as_the_bound_is_taken():
    assert parse(nested(JSON_MAX_DEPTH)) == json.loads(nested(JSON_MAX_DEPTH))
    assert parse('"just text"') == "just text"


@pytest.mark.parametrize("text", [nested(JSON_MAX_DEPTH + 1), "[" * 100_000 + "]" * 100_000])
def test_deeper_is_a_parse_error_naming_the_bound(text):
    with pytest.raises(ParseError, match=f"nested deeper than {JSON_MAX_DEPTH} levels"):
        parse(text)
    with pytest.raises(JSONTooDeep):
        bounded_loads(text)


def test_other_broken_json_keeps_drfs_words():
    with pytest.raises(ParseError, match="JSON parse error - Expecting"):
        parse("{nope")
