"""Names and parameters of the built-in reward functions.

The control plane validates a reward's parameters against these models when a
user saves it; the trainer builds the functions from the same names.
"""

import regex
from pydantic import BaseModel, ConfigDict, Field, field_validator

# Bounds on what a user may give a built-in (its regex runs on every completion of a run, and
# on the web server's dry runs); the timeout is the regex module's own, per completion.
MAX_REGEX_CHARS = 1000
MAX_TAGS = 16
MAX_NAME_CHARS = 200
REGEX_TIMEOUT_S = 1.0


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AccuracyParams(_Params):
    answer_column: str = Field("answer", max_length=MAX_NAME_CHARS,
                               description="Column with the reference answer (GSM8K '#### 42' understood).")


class ExactMatchParams(_Params):
    column: str = Field("answer", max_length=MAX_NAME_CHARS, description="Column the completion must equal.")
    strip: bool = Field(True, description="Ignore surrounding whitespace.")
    case_sensitive: bool = Field(False, description="Compare letter case too.")


class FormatParams(_Params):
    regex: str | None = Field(r"(?s).*####\s*-?[\d,]+(\.\d+)?\s*$", max_length=MAX_REGEX_CHARS,
                              description="Pattern the whole completion must match "
                                          "(default: ends with '#### <number>'). A match that takes "
                                          f"longer than {REGEX_TIMEOUT_S:g} s on a completion is an error.")
    tags: list[str] = Field(default_factory=list, max_length=MAX_TAGS,
                            description="Tags that must each appear opened and closed, e.g. think.")
    partial_credit: bool = Field(False, description="Score the share of tags present instead of all-or-nothing.")

    @field_validator("regex")
    @classmethod
    def _compiles(cls, pattern: str | None) -> str | None:
        if pattern is not None:
            try:
                compiled_pattern(pattern)
            except regex.error as exc:
                raise ValueError(f"not a regular expression: {exc}") from None
        return pattern

    @field_validator("tags")
    @classmethod
    def _short_tags(cls, tags: list[str]) -> list[str]:
        for tag in tags:
            if not tag or len(tag) > MAX_NAME_CHARS:
                raise ValueError(f"a tag is 1 to {MAX_NAME_CHARS} characters; {tag[:40]!r} is not")
        return tags


class LengthParams(_Params):
    min_tokens: int = Field(0, ge=0, description="Below this many tokens scores 0.")
    max_tokens: int = Field(256, ge=1, description="Above this, the score falls off linearly.")
    soft_penalty_tokens: int = Field(64, ge=0, description="Width of the linear fall-off past max_tokens.")


class RepetitionParams(_Params):
    ngram: int = Field(3, ge=1, le=10, description="Size of the repeated n-grams counted.")
    max_penalty: float = Field(-1.0, le=0.0, description="Score of a completion made only of repeats.")


def compiled_pattern(pattern: str) -> "regex.Pattern":
    """The `regex` module, not `re`: its matches take a timeout. VERSION0 reads patterns as `re` does."""
    return regex.compile(pattern, flags=regex.VERSION0)


BUILTINS: dict[str, type[_Params]] = {
    "accuracy": AccuracyParams,
    "exact_match": ExactMatchParams,
    "format": FormatParams,
    "length": LengthParams,
    "repetition": RepetitionParams,
}


# The parameters of a built-in that name a dataset column it reads.
COLUMN_PARAMS = {"accuracy": "answer_column", "exact_match": "column"}


def columns_read(builtin: str, params: dict) -> list[str]:
    """The dataset columns a built-in reward reads; code rewards say nothing, so nothing is checked."""
    param = COLUMN_PARAMS.get(builtin)
    if param is None:
        return []
    return [BUILTINS[builtin].model_validate(params).model_dump()[param]]
