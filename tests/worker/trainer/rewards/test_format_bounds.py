"""The format reward on untrusted patterns and completions: a pattern that backtracks without end
stops at the regex module's timeout with a message saying so; tags are found in one pass; the
catalog refuses a pattern that does not compile, is too long, or too many tags."""
import re

import pytest
from pydantic import ValidationError

from worker.trainer.rewards.builtins import RegexTimeout, build_builtin
from worker.trainer.rewards.catalog import FormatParams


def test_a_pattern_that_backtracks_without_end_stops_at_its_timeout():
    reward = build_builtin("format", {"regex": "(a|aa)+$"})
    with pytest.raises(RegexTimeout, match=r"took longer than 1 s on a completion of 5001 characters.*\(a\+\)\+"):
        reward(["p"], ["a" * 5000 + "!"])


def test_patterns_are_read_as_re_reads_them():
    reward = build_builtin("format", {})  # the default: ends with '#### <number>'
    assert reward(["p", "p"], ["so 6\n#### 6", "no answer"]) == [1.0, 0.0]


def test_a_tag_counts_when_it_is_opened_then_closed():
    reward = build_builtin("format", {"regex": None, "tags": ["think"], "partial_credit": True})
    completions = ["<think>x</think>", "</think><think>", "<think>" * 5000, "<think></think>"]
    assert reward(["p"] * 4, completions) == [1.0, 0.0, 0.0, 1.0]


@pytest.mark.parametrize("params,message", [
    ({"regex": "(unclosed"}, "not a regular expression: missing )"),
    ({"regex": "a" * 1001}, "at most 1000 characters"),
    ({"tags": ["t"] * 17}, "at most 16 items"),
    ({"tags": [""]}, "a tag is 1 to 200 characters"),
])
def test_the_catalog_refuses_patterns_and_tags_out_of_bounds(params, message):
    with pytest.raises(ValidationError, match=re.escape(message)):
        FormatParams.model_validate(params)
