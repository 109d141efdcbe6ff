"""The live messages (runs/live/messages.py): each type round-trips through JSON, keeps the
shape the browser reads, refuses unknown fields, and only run messages may be published."""
import json
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from runs.alarms.serializers import AlarmSerializer
from runs.telemetry.serializers import CheckpointSerializer, LogLineSerializer, SampleSerializer
from runs.live.events import LIVE_TYPES, publish, status_payload
from runs.live.messages import (
    AlarmMessage, AlarmRow, CheckpointMessage, CheckpointRow, HelloMessage, LogLineRow, PongMessage, SampleRow,
    StatusMessage, live_message_adapter, message_type
)
from runs.alarms.models import Alarm
from runs.checkpoints.models.checkpoint import Checkpoint
from runs.telemetry.models import LogLine, Sample
from tests.support.live_examples import EPISODE_ROW, SAMPLE_ROW, all_message_types, wire_messages

RUN_ID = 42
WIRE = wire_messages(RUN_ID)


def test_every_message_type_has_an_example():
    assert set(WIRE) == all_message_types()


@pytest.mark.parametrize("kind", sorted(WIRE))
def test_message_round_trips_through_json(kind):
    message = live_message_adapter.validate_python(WIRE[kind])
    assert message.type == kind
    text = message.model_dump_json()
    assert live_message_adapter.validate_json(text) == message
    assert type(message).model_validate_json(text) == message


@pytest.mark.parametrize("kind", sorted(WIRE))
def test_message_json_is_what_the_browser_reads(kind):
    message = live_message_adapter.validate_python(WIRE[kind])
    assert json.loads(message.model_dump_json()) == WIRE[kind]


@pytest.mark.parametrize("kind", sorted(WIRE))
def test_unknown_field_is_refused(kind):
    with pytest.raises(ValidationError, match="colour"):
        live_message_adapter.validate_python({**WIRE[kind], "colour": "red"})


@pytest.mark.parametrize("kind", sorted(kind for kind in WIRE if "payload" in WIRE[kind]))
def test_unknown_field_in_a_payload_is_refused(kind):
    wire = WIRE[kind]
    with pytest.raises(ValidationError, match="colour"):
        live_message_adapter.validate_python({**wire, "payload": {**wire["payload"], "colour": "red"}})


@pytest.mark.parametrize("kind, row_list",
                         [("run.samples", "samples"), ("run.log", "lines"), ("run.metrics", "points")])
def test_unknown_field_in_a_row_is_refused(kind, row_list):
    wire = WIRE[kind]
    row = {**wire["payload"][row_list][0], "colour": "red"}
    with pytest.raises(ValidationError, match="colour"):
        live_message_adapter.validate_python({**wire, "payload": {row_list: [row]}})


def test_unknown_field_in_an_episode_turn_is_refused():
    wire = WIRE["run.samples"]
    episode = {**EPISODE_ROW, "turns": [{**EPISODE_ROW["turns"][0], "colour": "red"}]}
    with pytest.raises(ValidationError, match="colour"):
        live_message_adapter.validate_python({**wire, "payload": {"samples": [episode]}})


def test_unknown_type_is_refused():
    with pytest.raises(ValidationError):
        live_message_adapter.validate_python({**WIRE["run.status"], "type": "run.gossip"})


def test_published_types_are_the_run_messages_but_hello():
    assert set(LIVE_TYPES) == all_message_types() - {"run.hello", "pong"}


@pytest.mark.parametrize("message", [
    HelloMessage(run=RUN_ID, payload=WIRE["run.hello"]["payload"]), PongMessage(),
    WIRE["run.status"],  # a dict, even of the right shape
], ids=["hello", "pong", "dict"])
def test_publish_takes_only_run_messages(message):
    with pytest.raises(TypeError, match="live message"):
        publish(message)


def test_status_messages_carry_where_the_run_stands(run):
    run.error_message, run.current_step = "boom", 4
    expected = {"status": "created", "cancel_requested": False, "step": 4, "error": "boom", "attempt": 0}
    for model in (StatusMessage, HelloMessage):
        assert json.loads(model.of(run).model_dump_json()) == {"type": message_type(model), "run": run.pk,
                                                               "payload": expected}
    assert status_payload(run) == expected


# The run page merges rows from REST with rows from the socket, so both must read the same.
def stored_telemetry(run, moment):
    fields = [{k: v for k, v in row.items() if k not in ("id", "step")} for row in (SAMPLE_ROW, EPISODE_ROW)]
    sample, episode = [Sample.objects.create(run=run, step=3, **values) for values in fields]
    line = LogLine.objects.create(run=run, time=moment, level="error", source="supervisor:1", message="died")
    checkpoint = Checkpoint.objects.create(run=run, step=3, path="/c/3", size_bytes=9, model_version=1,
                                           created_at=moment)
    return sample, episode, line, checkpoint


@pytest.mark.parametrize("moment", [datetime(2024, 5, 1, 12, 0, 0, 250000, tzinfo=UTC),
                                    datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)], ids=["fraction", "whole"])
@pytest.mark.parametrize("reload", [False, True], ids=["as-created", "from-db"])
def test_live_rows_read_as_the_api_lists_them(run, moment, reload):
    rows = stored_telemetry(run, moment)
    if reload:
        rows = [type(row).objects.get(pk=row.pk) for row in rows]
    live_models = (SampleRow, SampleRow, LogLineRow, CheckpointRow)
    serializers = (SampleSerializer, SampleSerializer, LogLineSerializer, CheckpointSerializer)
    for row, live_model, serializer in zip(rows, live_models, serializers):
        live = json.loads(live_model.model_validate(row).model_dump_json())
        assert live == json.loads(json.dumps(serializer(row).data))


def test_checkpoint_message_is_built_from_the_stored_row(run):
    *_, checkpoint = stored_telemetry(run, datetime(2024, 5, 1, tzinfo=UTC))
    message = CheckpointMessage.of(run, checkpoint)
    assert json.loads(message.model_dump_json())["payload"] == {
        "id": checkpoint.pk, "step": 3, "path": "/c/3", "size_bytes": 9, "model_version": 1,
        "created_at": "2024-05-01T00:00:00Z", "in_store": False}


def test_a_live_alarm_reads_as_the_api_lists_it(run):
    alarm = Alarm.objects.create(run=run, kind="sampler_drift", step=4, message="KL to the sampler 2 above 1 at step 4",
                                 values={"train/kl_to_sampler": 2.0, "alarm_kl_to_sampler_max": 1.0}, stopped_run=True)
    for row in (alarm, Alarm.objects.get(pk=alarm.pk)):
        live = json.loads(AlarmMessage.of(run, AlarmRow.model_validate(row)).model_dump_json())["payload"]
        assert live == json.loads(json.dumps(AlarmSerializer(row).data))
