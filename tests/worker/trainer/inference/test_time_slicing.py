"""Pausing generation while a step trains: when, and that the server always resumes."""
import httpx
import pytest

from worker.trainer.inference.time_slicing import GenerationPause, pauses_generation
from worker.trainer.weight_sync.server_api import VllmAdminClient


@pytest.mark.parametrize(("setting", "on_gpu", "expected"), [
    ("auto", False, True), ("auto", True, False), ("on", True, True), ("off", False, False)])
def test_auto_pauses_only_where_training_shares_the_cpu(setting, on_gpu, expected):
    assert pauses_generation(setting, on_gpu) is expected


def recording_client(calls: list):
    def answer(request: httpx.Request):
        calls.append((request.url.path, dict(request.url.params)))
        return httpx.Response(200, json={})
    return VllmAdminClient("http://vllm", transport=httpx.MockTransport(answer))


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


def test_without_a_client_nothing_is_asked_of_the_server():
    pause = GenerationPause(None)
    with pause.while_training():
        pass
    pause.close()
