"""What a judge and a reward model are made of: the parameters a user saves, validated the same
way on the control plane (when saved, and when a run names the reward) and on the worker.

A *judge* is a language model that answers a prompt template about one completion (`score`,
`choice`) or about a whole group at once (`rank`); its answer becomes a number (parsing.py).
It is served by the worker itself beside the policy (`endpoint: served`, a second vLLM) or
lives behind an OpenAI-compatible URL the user names (`endpoint: url`, with an API key kept
encrypted on the control plane and fetched by the run's worker alone: runs/rewards/secrets.py).

A *reward model* is a transformers sequence-classification model with one output: its logit for
(prompt, completion) is the reward (reward_model.py).
"""
import string
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

MAX_TEMPLATE_CHARS = 20_000
MAX_LABELS = 32
MAX_LABEL_CHARS = 200

# Placeholders a template may use beyond the dataset's columns.
PROMPT, COMPLETION, COMPLETIONS = "prompt", "completion", "completions"
BUILTIN_PLACEHOLDERS = {PROMPT, COMPLETION, COMPLETIONS}


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class JudgeLimits(_Params):
    """How hard a judge may be called: the run never waits on it beyond these (judges/client.py)."""
    max_concurrency: int = Field(8, ge=1, le=256, description="Calls in flight at once.")
    requests_per_minute: int = Field(0, ge=0, description="0: no limit.")
    tokens_per_minute: int = Field(0, ge=0, description="Prompt and answer tokens; 0: no limit.")
    timeout_s: float = Field(60.0, gt=0, le=600, description="A call past this gives None (counted, warned).")
    max_retries: int = Field(3, ge=0, le=10, description="Retries on 429, 5xx and lost connections, backing off.")


class JudgeParams(_Params):
    template: str = Field(min_length=1, max_length=MAX_TEMPLATE_CHARS, description=(
        "What the judge is asked, with {prompt}, {completion} and any dataset column in braces; a `rank` "
        "judge sees {completions} (the group, numbered from 1) instead of {completion}. Double a brace "
        "to write one: {{ }}."))
    system_prompt: str = Field("", max_length=MAX_TEMPLATE_CHARS)
    mode: Literal["score", "choice", "rank"] = Field("score", description=(
        "score: a number on [scale_min, scale_max], mapped to 0..1; choice: one of `labels`, worth its "
        "value; rank: the group ordered best first, the best worth 1 and the worst 0."))
    scale_min: float = Field(0.0, allow_inf_nan=False)
    scale_max: float = Field(10.0, allow_inf_nan=False)
    labels: dict[str, float] = Field(default_factory=dict, max_length=MAX_LABELS,
                                     description="choice: each answer the judge may give and its reward.")
    endpoint: Literal["served", "url"] = Field("served", description=(
        "served: the worker serves `model` in a second vLLM server beside the policy's; url: an "
        "OpenAI-compatible server at `base_url`."))
    model: str = Field(min_length=1, max_length=500, description=(
        "served: a hub id, a prepared model's name or a path in MODEL_DIRS (as a run's model); url: the "
        "model name the endpoint knows."))
    base_url: str = Field("", max_length=2000, description="url: e.g. https://api.openai.com/v1")
    constrained: bool = Field(True, description=(
        "Constrain the answer where the server can (a choice among the labels, a JSON schema) instead "
        "of parsing free text."))
    max_answer_tokens: int = Field(16, ge=1, le=4096)
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    pass_threshold: float = Field(0.5, allow_inf_nan=False, description=(
        "A reward at or above this is the judge paying: compared with a verifier's pass/fail for the "
        "disagreement metric and alarm."))
    input_cost_per_million: float = Field(0.0, ge=0.0, description="Dollars per million prompt tokens (estimate).")
    output_cost_per_million: float = Field(0.0, ge=0.0, description="Dollars per million answer tokens.")
    limits: JudgeLimits = Field(default_factory=JudgeLimits)

    @field_validator("template")
    @classmethod
    def _parses(cls, template: str) -> str:
        template_fields(template)
        return template

    @model_validator(mode="after")
    def _consistent(self):
        fields = template_fields(self.template)
        if self.mode == "rank":
            if COMPLETIONS not in fields:
                raise ValueError("template: a rank judge sees the whole group: write {completions} in it")
            if COMPLETION in fields:
                raise ValueError("template: a rank judge judges a group: use {completions}, not {completion}")
        elif COMPLETION not in fields:
            raise ValueError(f"template: a {self.mode} judge must see the answer: write {{completion}} in it")
        elif COMPLETIONS in fields:
            raise ValueError("template: {completions} is the group a rank judge sees; this judge is "
                             f"mode {self.mode!r}")
        if self.mode == "score" and self.scale_max <= self.scale_min:
            raise ValueError(f"scale_max ({self.scale_max:g}) must be above scale_min ({self.scale_min:g})")
        if self.mode == "choice" and len(self.labels) < 2:
            raise ValueError("labels: a choice judge needs at least two labels, each with its reward")
        if any(not label.strip() or len(label) > MAX_LABEL_CHARS for label in self.labels):
            raise ValueError(f"labels: a label is 1 to {MAX_LABEL_CHARS} characters (the answer the judge gives)")
        if self.endpoint == "url" and not self.base_url.startswith(("http://", "https://")):
            raise ValueError("base_url: an endpoint judge needs the server's http(s) URL, e.g. "
                             "https://api.openai.com/v1")
        if self.endpoint == "served" and self.base_url:
            raise ValueError("base_url: a served judge runs on the worker; give base_url only with endpoint 'url'")
        return self


class RewardModelParams(_Params):
    model: str = Field(min_length=1, max_length=500, description=(
        "A sequence-classification model with one output: a hub id, a prepared model's name or a path in "
        "MODEL_DIRS (as a run's model)."))
    batch_size: int = Field(8, ge=1, le=512)
    max_length: int = Field(1024, ge=16, le=32768, description="Prompt and completion tokens; longer is cut "
                                                              "from the left of the prompt.")
    chat_template: bool = Field(True, description="Score the conversation as the model's chat template writes "
                                                  "it, where it has one; else prompt and completion joined.")
    sigmoid: bool = Field(False, description="Map the logit to 0..1.")
    offset: float = Field(0.0, allow_inf_nan=False, description="Subtracted from the score (before sigmoid).")


def template_fields(template: str) -> set[str]:
    """The placeholders of a template; ValueError naming what is wrong (an unclosed brace, a
    positional {} or an attribute like {row.x})."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ValueError(f"template: {exc} (write {{{{ and }}}} for literal braces)") from None
    fields = set()
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if not name.isidentifier():
            raise ValueError(f"template: {{{name}}} is not a placeholder: use a column's name, {{prompt}} or "
                             "{completion} (write {{ and }} for literal braces)")
        if spec or conversion:
            raise ValueError(f"template: {{{name}}} takes no format or conversion")
        fields.add(name)
    return fields


def judge_columns(params: dict) -> list[str]:
    """The dataset columns a judge's template reads (checked against a run's dataset)."""
    return sorted(template_fields(JudgeParams.model_validate(params).template) - BUILTIN_PLACEHOLDERS)
