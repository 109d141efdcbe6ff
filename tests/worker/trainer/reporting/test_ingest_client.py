"""The ingest HTTP client: retries what can succeed later, gives up clearly on what cannot."""
import httpx
import pytest

from worker.trainer.reporting.client import IngestClient, IngestRejected, IngestUnreachable

REPLY = {"stored": 1, "duplicates": 0, "status": "running", "cancel_requested": False}


def client_with(responses: list, **kwargs) -> tuple[IngestClient, list]:
    seen = []

    def handle(request):
        seen.append(request)
        outcome = responses.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    client = IngestClient("http://cp/api/runs/1/events/", "tok", source="trainer", backoff_s=0,
                          transport=httpx.MockTransport(handle), **kwargs)
    return client, seen


def test_sends_the_batch_with_the_run_token_and_source():
    client, seen = client_with([httpx.Response(200, json=REPLY)])
    reply = client.send([{"seq": 1, "type": "heartbeat"}])
    assert reply.status == "running"
    assert seen[0].headers["Authorization"] == "Bearer tok"
    assert b'"source":"trainer"' in seen[0].content.replace(b" ", b"")


def test_retries_connection_errors_and_server_errors_then_succeeds():
    client, seen = client_with([httpx.ConnectError("down"), httpx.Response(503), httpx.Response(200, json=REPLY)])
    assert client.send([{"seq": 1, "type": "heartbeat"}]).stored == 1
    assert len(seen) == 3


def test_gives_up_after_the_retries_with_the_reason():
    client, seen = client_with([httpx.ConnectError("down")] * 3, retries=2)
    with pytest.raises(IngestUnreachable, match="after 3 tries.*ConnectError"):
        client.send([{"seq": 1, "type": "heartbeat"}])
    assert len(seen) == 3


def test_a_refused_batch_is_not_retried():
    client, seen = client_with([httpx.Response(400, json={"detail": "bad"})])
    with pytest.raises(IngestRejected, match="HTTP 400") as refused:
        client.send([{"seq": 1, "type": "heartbeat"}])
    assert refused.value.status_code == 400 and len(seen) == 1
