"""The event format trainers and supervisors send to `POST /api/runs/<id>/events/`.

A closed set of typed events. Unknown types and unknown fields are errors, so
a sender and the control plane that disagree fail loudly instead of dropping
data. Every event carries `seq`, increasing per (run, source): the control
plane stores an event once however often its batch is retried.
"""
from typing import Annotated, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter

ReportableStatus = Literal["starting", "running", "succeeded", "failed", "cancelled"]
RUN_STATUSES_REPORTABLE = get_args(ReportableStatus)
MAX_EVENTS_PER_BATCH = 5000
_finite = {"allow_inf_nan": False}
# Model output and log lines can hold NUL characters, which PostgreSQL text refuses.
Text = Annotated[str, AfterValidator(lambda text: text.replace("\x00", "\ufffd"))]


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seq: int = Field(ge=1)
    time: float | None = Field(None, description="Unix time the sender observed the event.")


class StatusEvent(_Event):
    type: Literal["status"]
    status: ReportableStatus
    message: Text = Field("", max_length=20000, description="Why the status changed (the failure reason for failed).")


class MetricsEvent(_Event):
    type: Literal["metrics"]
    step: int = Field(ge=0)
    values: dict[Annotated[str, Field(min_length=1, max_length=200)],
                 Annotated[float, Field(**_finite)]] = Field(min_length=1)


class ToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Text = Field(max_length=200)
    arguments: Text = Field("", description="As the model wrote them (JSON for hermes calls).")


class SampleTurn(BaseModel):
    """One message of an episode. Assistant turns were sampled (and trained, unless cut off);
    the others came from the prompt or the environment and are masked out of the loss."""
    model_config = ConfigDict(extra="forbid")
    role: Literal["system", "user", "assistant", "tool"]
    content: Text
    tool_calls: list[ToolCall] = Field(default_factory=list)
    trained: bool = False
    model_version: int | None = Field(None, ge=0, description="The policy version that sampled it (assistant).")
    num_tokens: int = Field(0, ge=0)
    error: Text = Field("", max_length=2000, description="A tool error, a malformed call, an environment failure.")


class SampleRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")
    group: int = Field(ge=0)
    prompt: Text
    completion: Text
    rewards: dict[str, float | None] = Field(default_factory=dict)
    total_reward: float | None = None
    advantage: float | None = None
    model_version: int = Field(0, ge=0)
    staleness: int = Field(0, ge=0)
    num_tokens: int = Field(0, ge=0)
    finish_reason: str = Field("", max_length=40)
    turns: list[SampleTurn] | None = Field(None, max_length=2000, description="The episode, for multi-turn "
                                           "rollouts; none for one-shot prompts.")
    end_reason: str = Field("", max_length=40, description="Why the episode ended: done, max_turns, "
                            "max_tokens, context, environment_error, environment_timeout.")
    judgements: dict[str, Annotated[Text, Field(max_length=20000)] | None] | None = Field(
        None, max_length=64, description="Each judge's raw answer, by reward name (None: no answer); none without "
                                         "judges. The worker keeps 16000 characters of an answer "
                                         "(rewards/judges/client.py).")


class SamplesEvent(_Event):
    type: Literal["samples"]
    step: int = Field(ge=0)
    samples: list[SampleRecord] = Field(min_length=1, max_length=1024)


class EvalAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: Text
    rewards: dict[str, float | None] = Field(default_factory=dict)
    total_reward: float | None = None
    passed: bool = False
    num_tokens: int = Field(0, ge=0)
    finish_reason: str = Field("", max_length=40)


class EvalExample(BaseModel):
    """One evaluation example's answers at one evaluation. `index` is its place in the run's
    evaluation set; `key` names it across runs (a hash of its prompt)."""
    model_config = ConfigDict(extra="forbid")
    index: int = Field(ge=0)
    key: str = Field(pattern=r"^[0-9a-f]{16}$")
    prompt: Text
    answers: list[EvalAnswer] = Field(min_length=1, max_length=64)


class EvaluationEvent(_Event):
    """The answers of one evaluation (its summary travels as eval/ metrics at the same step)."""
    type: Literal["evaluation"]
    step: int = Field(ge=0)
    model_version: int = Field(0, ge=0)
    examples: list[EvalExample] = Field(min_length=1, max_length=1024)


class LogEvent(_Event):
    type: Literal["log"]
    level: Literal["debug", "info", "warning", "error"] = "info"
    source: str = Field("trainer", max_length=40)
    message: Text = Field(max_length=20000)


class CheckpointEvent(_Event):
    type: Literal["checkpoint"]
    step: int = Field(ge=0)
    path: str = Field(min_length=1, max_length=1000)
    size_bytes: int = Field(0, ge=0)
    model_version: int = Field(0, ge=0)


class HeartbeatEvent(_Event):
    type: Literal["heartbeat"]
    step: int | None = Field(None, ge=0)


Event = Annotated[
    StatusEvent | MetricsEvent | SamplesEvent | LogEvent | CheckpointEvent | HeartbeatEvent | EvaluationEvent,
    Field(discriminator="type"),
]
EVENT_TYPES = ("status", "metrics", "samples", "log", "checkpoint", "heartbeat", "evaluation")


class EventBatch(BaseModel):
    model_config = ConfigDict(extra="forbid")
    source: str = Field("trainer", pattern=r"^[A-Za-z0-9_.:-]{1,64}$",
                        description="Who sends: sequence numbers are counted per source.")
    events: list[Event] = Field(min_length=1, max_length=MAX_EVENTS_PER_BATCH)


class IngestReply(BaseModel):
    """What the control plane answers to a batch: whether to stop, and what it kept."""
    stored: int
    duplicates: int
    status: str
    cancel_requested: bool


event_adapter = TypeAdapter(Event)
