"""POST /api/runs/<id>/events/: typed batches, stored once, refused whole when malformed."""
import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from runs.live.events import run_group
from runs.live.messages import live_message_adapter
from runs.checkpoints.models.checkpoint import Checkpoint
from runs.telemetry.models import EventCursor, LogLine, MetricPoint, Sample
from runs.training_runs.models import Run
from tests.support.ingest import post_events


def metrics(seq, step, **values):
    return {"seq": seq, "type": "metrics", "step": step, "values": values or {"train/loss": 0.5}}


SAMPLE = {"group": 0, "prompt": "What is 2+2?", "completion": "#### 4", "rewards": {"acc": 1.0, "fmt": None},
          "total_reward": 1.0, "advantage": 0.7, "model_version": 3, "staleness": 1, "num_tokens": 5,
          "finish_reason": "stop"}


def test_batch_of_every_type_is_stored(anon_api, started_run):
    events = [
        {"seq": 1, "type": "status", "status": "starting"},
        {"seq": 2, "type": "status", "status": "running"},
        metrics(3, 1, **{"train/loss": 0.25, "rollout/reward_mean": 0.5}),
        {"seq": 4, "type": "samples", "step": 1, "samples": [SAMPLE]},
        {"seq": 5, "type": "log", "level": "warning", "message": "slow step"},
        {"seq": 6, "type": "checkpoint", "step": 1, "path": "/ckpt/1", "size_bytes": 10, "model_version": 1},
        {"seq": 7, "type": "heartbeat", "step": 2},
    ]
    response = post_events(anon_api, started_run, events)
    assert response.status_code == 200, response.json()
    assert response.json() == {"stored": 7, "duplicates": 0, "status": "running", "cancel_requested": False}
    run = Run.objects.get(pk=started_run.pk)
    assert run.status == "running" and run.current_step == 2 and run.last_heartbeat_at is not None
    assert {(m.name, m.step, m.value) for m in MetricPoint.objects.filter(run=run)} == {
        ("train/loss", 1, 0.25), ("rollout/reward_mean", 1, 0.5)}
    sample = Sample.objects.get(run=run)
    assert sample.rewards == {"acc": 1.0, "fmt": None} and sample.model_version == 3 and sample.staleness == 1
    assert LogLine.objects.get(run=run).level == "warning"
    assert Checkpoint.objects.get(run=run).path == "/ckpt/1"


def test_same_batch_sent_twice_is_stored_once(anon_api, started_run):
    events = [metrics(1, 1), metrics(2, 2), {"seq": 3, "type": "log", "message": "hi"}]
    first = post_events(anon_api, started_run, events)
    second = post_events(anon_api, started_run, events)
    assert first.json()["stored"] == 3
    assert second.status_code == 200
    assert second.json()["stored"] == 0 and second.json()["duplicates"] == 3
    assert MetricPoint.objects.filter(run=started_run).count() == 2
    assert LogLine.objects.filter(run=started_run).count() == 1


def test_overlapping_batch_stores_only_the_new_events(anon_api, started_run):
    post_events(anon_api, started_run, [metrics(1, 1), metrics(2, 2)])
    reply = post_events(anon_api, started_run, [metrics(2, 2), metrics(3, 3)]).json()
    assert (reply["stored"], reply["duplicates"]) == (1, 1)
    assert sorted(MetricPoint.objects.filter(run=started_run).values_list("step", flat=True)) == [1, 2, 3]


def test_sequence_numbers_are_counted_per_source(anon_api, started_run):
    post_events(anon_api, started_run, [metrics(1, 1)], source="trainer")
    reply = post_events(anon_api, started_run, [{"seq": 1, "type": "log", "message": "x"}], source="supervisor:1")
    assert reply.json()["stored"] == 1
    assert dict(EventCursor.objects.filter(run=started_run).values_list("source", "last_seq")) == {
        "trainer": 1, "supervisor:1": 1}


@pytest.mark.parametrize(("event", "reason"), [
    ({"seq": 2, "type": "bogus"}, "bogus"),
    ({"seq": 2, "type": "log", "message": "x", "colour": "red"}, "colour"),
    ({"seq": 2, "type": "metrics", "step": 1, "values": {"loss": "high"}}, "values.loss"),
    ({"seq": 0, "type": "log", "message": "x"}, "seq"),
    ({"seq": 2, "type": "status", "status": "exploded"}, "status"),
    ({"seq": 2, "type": "samples", "step": 1, "samples": [{**SAMPLE, "extra": 1}]}, "extra"),
])
def test_malformed_batch_is_refused_whole(anon_api, started_run, event, reason):
    response = post_events(anon_api, started_run, [metrics(1, 1), event])
    assert response.status_code == 400
    body = response.json()
    assert "nothing was stored" in body["detail"]
    assert any(reason in error for error in body["errors"]), body
    assert not MetricPoint.objects.filter(run=started_run).exists()
    assert not EventCursor.objects.filter(run=started_run, last_seq__gt=0).exists()


@pytest.mark.parametrize("number", ["NaN", "Infinity", "1e400"])
def test_non_finite_metric_value_is_refused(anon_api, started_run, number):
    body = f'{{"events": [{{"seq": 1, "type": "metrics", "step": 1, "values": {{"loss": {number}}}}}]}}'
    response = anon_api.generic("POST", f"/api/runs/{started_run.pk}/events/", body,
                                content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {started_run.test_token}")
    assert response.status_code == 400
    assert not MetricPoint.objects.exists()


def test_body_that_is_not_json_is_a_400(anon_api, started_run):
    response = anon_api.generic("POST", f"/api/runs/{started_run.pk}/events/", "{not json",
                                content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {started_run.test_token}")
    assert response.status_code == 400
    assert "JSON" in response.json()["detail"]


def test_empty_batch_is_refused(anon_api, started_run):
    assert post_events(anon_api, started_run, []).status_code == 400


def test_illegal_status_refuses_the_batch_and_keeps_what_was_stored(anon_api, started_run):
    post_events(anon_api, started_run, [{"seq": 1, "type": "status", "status": "starting"}, metrics(2, 1)])
    response = post_events(anon_api, started_run, [metrics(3, 2), {"seq": 4, "type": "status", "status": "succeeded"}])
    assert response.status_code == 409
    assert "starting" in response.json()["detail"] and "succeeded" in response.json()["detail"]
    assert list(MetricPoint.objects.filter(run=started_run).values_list("step", flat=True)) == [1]
    assert Run.objects.get(pk=started_run.pk).status == "starting"


def test_wrong_token_is_refused(anon_api, started_run):
    response = post_events(anon_api, started_run, [metrics(1, 1)], token="not-the-token")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert not MetricPoint.objects.exists()


def test_missing_token_is_refused_even_for_the_owner(owner_api, started_run):
    response = owner_api.post(f"/api/runs/{started_run.pk}/events/", {"events": [metrics(1, 1)]}, format="json")
    assert response.status_code == 401


def test_token_works_for_its_own_run_only(anon_api, started_run, owner, dataset, config):
    other = Run.objects.create(owner=owner, name="r2", dataset=dataset, config=dict(config.values))
    other.issue_ingest_token()
    other.save()
    response = post_events(anon_api, other, [metrics(1, 1)], token=started_run.test_token)
    assert response.status_code == 401
    assert not MetricPoint.objects.exists()


def test_unknown_run_reads_like_a_wrong_token(anon_api, started_run):
    response = anon_api.post("/api/runs/999999/events/", {"events": [metrics(1, 1)]}, format="json",
                             HTTP_AUTHORIZATION=f"Bearer {started_run.test_token}")
    assert response.status_code == 401


def test_reply_tells_the_sender_a_cancel_was_requested(anon_api, started_run):
    post_events(anon_api, started_run, [{"seq": 1, "type": "status", "status": "starting"}])
    run = Run.objects.get(pk=started_run.pk)
    run.request_cancel()
    run.save()
    reply = post_events(anon_api, started_run, [{"seq": 2, "type": "heartbeat"}]).json()
    assert reply["cancel_requested"] is True


def test_ingest_publishes_after_commit_to_the_run_group(anon_api, started_run, django_capture_on_commit_callbacks):
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(run_group(started_run.pk), channel)
    with django_capture_on_commit_callbacks(execute=True):
        post_events(anon_api, started_run, [
            {"seq": 1, "type": "status", "status": "starting"}, metrics(2, 4, **{"train/loss": 1.5}),
            {"seq": 3, "type": "samples", "step": 4, "samples": [SAMPLE]},
            {"seq": 4, "type": "log", "message": "hello"},
            {"seq": 5, "type": "checkpoint", "step": 4, "path": "/c/4"},
        ])

    async def receive_five():
        # One event loop for all receives: channels_redis ties its receive state to the loop.
        return [await layer.receive(channel) for _ in range(5)]

    envelopes = async_to_sync(receive_five)()
    # Each is a typed live message, tagged for the consumer's handler with its own type.
    decoded = [live_message_adapter.validate_json(envelope["text"]) for envelope in envelopes]
    assert [envelope["type"] for envelope in envelopes] == [message.type for message in decoded]
    received = {message.type: message.payload for message in decoded}
    assert received["run.status"].status == "starting"
    assert received["run.metrics"].points[0].values == {"train/loss": 1.5}
    samples = received["run.samples"].samples
    assert samples[0].completion == "#### 4" and samples[0].id == Sample.objects.get(run=started_run).pk
    assert received["run.log"].lines[0].message == "hello"
    assert received["run.checkpoint"].path == "/c/4"


def test_nothing_is_published_when_the_batch_is_refused(anon_api, started_run, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        post_events(anon_api, started_run, [metrics(1, 1), {"seq": 2, "type": "status", "status": "succeeded"}])
    assert callbacks == []
