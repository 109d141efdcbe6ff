"""Pausing generation while a step trains (cpu_sharing take_turns): the server always resumes."""
import httpx
import pytest

from worker.trainer.inference.time_slicing import GenerationPause
from worker.trainer.inference.server_api import ServerPause, VllmAdminClient


def recording_client(calls: list):
    def answer(request: httpx.Request):
        calls.append((request.url.path, dict(request.url.params)))
        return httpx.Response(200, json={})
    return ServerPause(VllmAdminClient("http://vllm", transport=httpx.MockTransport(answer)))


def test_the_server_is_paused_keeping_requests_and_resumed_after_the_step():
    calls = []
    pause = GenerationPause(recording_client(calls))
    with pause.while_training():
        calls.append(("training", {}))
    assert calls == [("/pause", {"mode": "keep"}), ("training", {}), ("/resume", {})]


def test_the_server_resumes_when_the_step_fails():
    calls = []
    pause = GenerationPause(recording_client(calls))
    with pytest.raises(RuntimeError), pause.while_training():
        raise RuntimeError("out of memory")
    assert calls[-1] == ("/resume", {})


def test_without_a_client_nothing_is_asked_of_the_server(monkeypatch):
    sent = []
    monkeypatch.setattr(httpx.Client, "send", lambda client, request, **kwargs: sent.append(request))
    pause = GenerationPause(None)
    trained = []
    with pause.while_training():
        trained.append("step")
    assert trained == ["step"] and sent == [] and not pause.pausing


def test_nested_holds_pause_and_resume_the_server_once():
    calls = []
    server_pause = recording_client(calls)
    with GenerationPause(server_pause).while_training():
        with server_pause.paused("wait"):  # the weight sync inside the step
            assert server_pause.held
        calls.append(("after the sync", {}))
    assert calls == [("/pause", {"mode": "keep"}), ("after the sync", {}), ("/resume", {})]
    assert not server_pause.held


def test_a_failed_pause_leaves_nothing_held():
    def refuse(request):
        return httpx.Response(500, json={"error": "EngineDeadError"})
    server_pause = ServerPause(VllmAdminClient("http://vllm", transport=httpx.MockTransport(refuse)))
    with pytest.raises(Exception, match="pause"), server_pause.paused("keep"):
        pass
    assert not server_pause.held
