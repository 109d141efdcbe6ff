"""What a run's websocket tells the browser: one model per message, `type` its tag.

A run message reads `{"type": "run.<what>", "run": <id>, "payload": {...}}`; the answer to a
ping is a bare `{"type": "pong"}`. Unknown fields are errors, as they are on the way in
(worker.trainer.events), so a change of shape fails a test instead of a page. The rows in
payloads are the rows the REST API lists (runs.telemetry.serializers): the run page
merges both, so tests/runs/live/test_live_messages.py holds them equal.
"""
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Literal, Self, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from runs.telemetry.models import LogLine
from runs.training_runs.models import RunStatus
from worker.trainer.events import SampleRecord

# from_attributes: rows are read straight from model instances (Sample, LogLine, Checkpoint).
_STRICT = ConfigDict(extra="forbid", from_attributes=True, frozen=True)

# The models' choices as Literals, which pydantic checks (and the schema lists); to mypy, which
# cannot build a Literal from values, they are text.
if TYPE_CHECKING:
    RunStatusValue = str
    LogLevelValue = str
else:
    RunStatusValue = Literal[tuple(RunStatus.values)]
    LogLevelValue = Literal[tuple(LogLine.Level.values)]


class _Strict(BaseModel):
    model_config = _STRICT


# --- payloads ------------------------------------------------------------------------------

class RunState(_Strict):
    """Where a run stands: what run.hello and run.status carry, and what the run page starts from."""
    status: RunStatusValue
    cancel_requested: bool
    step: int
    error: str
    attempt: int

    @classmethod
    def of(cls, run) -> "RunState":
        return cls(status=run.status, cancel_requested=run.cancel_requested, step=run.current_step,
                   error=run.error_message, attempt=run.attempt)


class MetricPointRow(_Strict):
    step: int
    time: float = Field(description="Unix time the sender observed the values.")
    values: dict[str, float]


class MetricsPayload(_Strict):
    points: list[MetricPointRow]


class SampleRow(SampleRecord):
    """A stored sample: the trainer's record, with the id and step it was stored under."""
    model_config = _STRICT
    id: int
    step: int


class SamplesPayload(_Strict):
    samples: list[SampleRow]


class LogLineRow(_Strict):
    id: int
    time: datetime
    level: LogLevelValue
    source: str
    message: str


class LogPayload(_Strict):
    lines: list[LogLineRow]


class CheckpointRow(_Strict):
    id: int
    step: int
    path: str
    size_bytes: int
    model_version: int
    created_at: datetime
    in_store: bool = False


class EvaluationRow(_Strict):
    """That an evaluation was stored: the page fetches its outcomes (its eval/ metrics come
    as run.metrics)."""
    step: int
    model_version: int
    examples: int


class AlarmRow(_Strict):
    id: int
    kind: str
    step: int
    message: str
    values: dict[str, float]
    stopped_run: bool
    created_at: datetime


# --- messages ------------------------------------------------------------------------------

class _Message(_Strict):
    type: str  # each message narrows it to its own literal, which tags it


class _RunMessage(_Message):
    run: int


class _RunStateMessage(_RunMessage):
    payload: RunState

    @classmethod
    def of(cls, run) -> Self:
        return cls(run=run.pk, payload=RunState.of(run))  # type: ignore[call-arg]  # each subclass defaults `type`


class HelloMessage(_RunStateMessage):
    """The first message on each connection (runs.live.consumers), so the page knows what to re-fetch."""
    type: Literal["run.hello"] = "run.hello"


class StatusMessage(_RunStateMessage):
    type: Literal["run.status"] = "run.status"


class MetricsMessage(_RunMessage):
    type: Literal["run.metrics"] = "run.metrics"
    payload: MetricsPayload

    @classmethod
    def of(cls, run, points: list[MetricPointRow]) -> "MetricsMessage":
        return cls(run=run.pk, payload=MetricsPayload(points=points))


class SamplesMessage(_RunMessage):
    type: Literal["run.samples"] = "run.samples"
    payload: SamplesPayload

    @classmethod
    def of(cls, run, samples) -> "SamplesMessage":
        return cls(run=run.pk, payload=SamplesPayload(samples=samples))


class LogMessage(_RunMessage):
    type: Literal["run.log"] = "run.log"
    payload: LogPayload

    @classmethod
    def of(cls, run, lines) -> "LogMessage":
        return cls(run=run.pk, payload=LogPayload(lines=lines))


class CheckpointMessage(_RunMessage):
    type: Literal["run.checkpoint"] = "run.checkpoint"
    payload: CheckpointRow

    @classmethod
    def of(cls, run, checkpoint) -> "CheckpointMessage":
        return cls(run=run.pk, payload=checkpoint)


class EvaluationMessage(_RunMessage):
    type: Literal["run.evaluation"] = "run.evaluation"
    payload: EvaluationRow

    @classmethod
    def of(cls, run, row: EvaluationRow) -> "EvaluationMessage":
        return cls(run=run.pk, payload=row)


class AlarmMessage(_RunMessage):
    type: Literal["run.alarm"] = "run.alarm"
    payload: AlarmRow

    @classmethod
    def of(cls, run, alarm) -> "AlarmMessage":
        return cls(run=run.pk, payload=alarm)


class PongMessage(_Message):
    """The answer to a client's {"type": "ping"}."""
    type: Literal["pong"] = "pong"


# What runs.live.events.publish sends to a run's group, after a commit; the consumer sends the rest.
PublishedMessage = (StatusMessage | MetricsMessage | SamplesMessage | LogMessage | CheckpointMessage
                    | EvaluationMessage | AlarmMessage)
PUBLISHED = get_args(PublishedMessage)
MESSAGES = (HelloMessage, PongMessage, *PUBLISHED)
LiveMessage = Annotated[HelloMessage | PongMessage | PublishedMessage, Field(discriminator="type")]
live_message_adapter = TypeAdapter(LiveMessage)


def message_type(model: type[_Message]) -> str:
    return model.model_fields["type"].default
