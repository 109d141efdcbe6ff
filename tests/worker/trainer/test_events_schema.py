"""The event format: every type survives a JSON round trip; unknown types and fields are refused."""
import json

import pytest
from pydantic import ValidationError

from worker.trainer.events import EVENT_TYPES, EventBatch, event_adapter

EXAMPLES = {
    "status": {"seq": 1, "type": "status", "status": "failed", "message": "OOM", "time": 1.5},
    "metrics": {"seq": 2, "type": "metrics", "step": 3, "values": {"train/loss": 0.1, "rollout/reward_mean": 1.0}},
    "samples": {"seq": 3, "type": "samples", "step": 3, "samples": [{
        "group": 0, "prompt": "p", "completion": "c", "rewards": {"a": 1.0, "b": None}, "total_reward": 1.0,
        "advantage": -0.5, "model_version": 2, "staleness": 1, "num_tokens": 7, "finish_reason": "length"}]},
    "log": {"seq": 4, "type": "log", "level": "error", "source": "vllm", "message": "boom"},
    "checkpoint": {"seq": 5, "type": "checkpoint", "step": 10, "path": "/x", "size_bytes": 5, "model_version": 3},
    "heartbeat": {"seq": 6, "type": "heartbeat", "step": 4},
    "evaluation": {"seq": 7, "type": "evaluation", "step": 10, "model_version": 10, "examples": [{
        "index": 0, "key": "0123456789abcdef", "prompt": "2+2?", "answers": [{
            "text": "4", "rewards": {"accuracy": 1.0}, "total_reward": 1.0, "passed": True, "num_tokens": 1,
            "finish_reason": "stop"}]}]},
}


def test_every_event_type_has_an_example():
    assert set(EXAMPLES) == set(EVENT_TYPES)


@pytest.mark.parametrize("event_type", EVENT_TYPES)
def test_event_round_trips_through_json(event_type):
    event = event_adapter.validate_python(EXAMPLES[event_type])
    again = event_adapter.validate_json(json.dumps(event_adapter.dump_python(event, mode="json")))
    assert again == event and again.type == event_type


@pytest.mark.parametrize("event_type", EVENT_TYPES)
def test_unknown_field_is_refused(event_type):
    with pytest.raises(ValidationError, match="surprise"):
        event_adapter.validate_python({**EXAMPLES[event_type], "surprise": 1})


def test_unknown_type_is_refused():
    with pytest.raises(ValidationError, match="does not match any of the expected tags"):
        event_adapter.validate_python({"seq": 1, "type": "gossip"})


def test_batch_source_is_restricted_to_a_safe_name():
    with pytest.raises(ValidationError, match="source"):
        EventBatch.model_validate({"source": "a b/c", "events": [EXAMPLES["heartbeat"]]})


def test_nul_characters_in_text_are_replaced_so_any_database_stores_them():
    log = event_adapter.validate_python({"seq": 1, "type": "log", "message": "a\x00b"})
    sample = event_adapter.validate_python({**EXAMPLES["samples"], "samples": [
        {**EXAMPLES["samples"]["samples"][0], "completion": "x\x00"}]})
    assert log.message == "a\ufffdb" and sample.samples[0].completion == "x\ufffd"
