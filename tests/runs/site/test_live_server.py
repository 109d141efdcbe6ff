"""The real product over real sockets: uvicorn in a subprocess, a websockets client, HTTP ingest.

Run on the in-memory channel layer and on channels_redis (the latter also
receives from another process, which is what Redis is for).
"""
import asyncio
import json
import os

import httpx
import pytest
import redis
import websockets

from tests.support.asgi_server import SEED_RUN, AsgiServer, logged_in_client

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/3")


def redis_available() -> bool:
    try:
        return redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except redis.RedisError:
        return False


def layer_params():
    needs_redis = pytest.mark.skipif(not redis_available() and os.environ.get("CI") != "true",
                                     reason=f"no Redis at {REDIS_URL}")
    return [pytest.param("", id="in-memory"), pytest.param(REDIS_URL, id="redis", marks=needs_redis)]


@pytest.fixture(scope="module", params=layer_params())
def server(request, tmp_path_factory):
    # One server per layer for the module: starting one (migrate + uvicorn) takes seconds.
    with AsgiServer(tmp_path_factory.mktemp("server"), env={"REDIS_URL": request.param}) as running:
        running.seed = running.shell_json(SEED_RUN)
        running.redis_url = request.param
        yield running


def ws_url(server) -> str:
    return server.url.replace("http", "ws") + f"/ws/runs/{server.seed['run_id']}/"


def ws_headers(client: httpx.Client) -> dict:
    cookie = "; ".join(f"{name}={value}" for name, value in client.cookies.items())
    return {"Cookie": cookie, "Origin": "http://127.0.0.1"}


def post_events(server, events):
    response = httpx.post(f"{server.url}/api/runs/{server.seed['run_id']}/events/",
                          json={"source": "trainer", "events": events},
                          headers={"Authorization": f"Bearer {server.seed['token']}"}, timeout=10)
    response.raise_for_status()
    return response.json()


async def next_of_type(socket, event_type, timeout=10):
    async def wait():
        while True:
            message = json.loads(await socket.recv())
            if message["type"] == event_type:
                return message
    return await asyncio.wait_for(wait(), timeout)


async def test_owner_sees_ingested_events_live(server):
    client = logged_in_client(server, "owner", "owner-pass-123")
    async with websockets.connect(ws_url(server), additional_headers=ws_headers(client)) as socket:
        hello = await next_of_type(socket, "run.hello")
        assert hello["payload"]["status"] == "queued"
        reply = await asyncio.to_thread(post_events, server, [
            {"seq": 1, "type": "status", "status": "starting"},
            {"seq": 2, "type": "metrics", "step": 3, "values": {"train/loss": 0.75}},
        ])
        assert reply["stored"] == 2
        status = await next_of_type(socket, "run.status")
        assert status["payload"]["status"] == "starting"
        metrics = await next_of_type(socket, "run.metrics")
        sent_time = metrics["payload"]["points"][0]["time"]
        assert metrics["payload"]["points"] == [{"step": 3, "time": pytest.approx(sent_time),
                                                 "values": {"train/loss": 0.75}}]
    # What the socket announced is there over REST.
    api = client.get(f"/api/runs/{server.seed['run_id']}/metrics/").json()
    assert api["series"]["train/loss"]["value"] == [0.75]


async def test_other_user_cannot_open_the_runs_socket(server):
    client = logged_in_client(server, "other", "other-pass-123")
    with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
        async with websockets.connect(ws_url(server), additional_headers=ws_headers(client)):
            pass
    assert refused.value.response.status_code == 403


async def test_anonymous_cannot_open_the_runs_socket(server):
    with pytest.raises(websockets.exceptions.InvalidStatus):
        async with websockets.connect(ws_url(server), additional_headers={"Origin": "http://127.0.0.1"}):
            pass


async def test_redis_layer_carries_messages_between_processes(server):
    if not server.redis_url:
        pytest.skip("only meaningful on channels_redis")
    from channels_redis.core import RedisChannelLayer

    client = logged_in_client(server, "owner", "owner-pass-123")
    async with websockets.connect(ws_url(server), additional_headers=ws_headers(client)) as socket:
        await next_of_type(socket, "run.hello")
        layer = RedisChannelLayer(hosts=[server.redis_url])
        text = json.dumps({"type": "run.log", "run": 0, "payload": {"lines": []}})
        await layer.group_send(f"run-{server.seed['run_id']}", {"type": "run.log", "text": text})
        assert (await next_of_type(socket, "run.log"))["payload"] == {"lines": []}
        await layer.flush()
