"""A model-played dry run on a live server answers 202 at once and is played by the real consumer,
through loading and its turns, to the result a typed dry run has; the web server's process never
maps torch, the consumer's does."""
from tests.support.background_work import maps_libtorch, owner_client, polled, process_tree


def ask(client, server, **body):
    return client.post(f"/api/environments/{server.seed['environment']}/dry-run/",
                       json={"dataset": server.seed["dataset"], **body})


def test_a_model_played_dry_run_is_queued_and_played_by_the_consumer_never_by_the_web_server(live):
    client = owner_client(live)
    typed = ask(client, live, turns=["#### 1"])
    assert typed.status_code == 200, typed.text
    asked = ask(client, live, model="tiny-llama", max_turns=2)
    assert asked.status_code == 202, asked.text
    assert asked.json()["state"] == "queued" and asked.headers["location"] == asked.json()["url"]
    seen = polled(client, asked.json()["url"], lambda answer: answer["state"] in ("done", "failed"))
    assert seen[-1]["state"] == "done", seen[-1]["error"]
    assert set(seen[-1]["result"]) == set(typed.json())  # the same shape as a typed dry run's answer
    assert seen[-1]["result"]["player"] == "model" and seen[-1]["result"]["assistant_turns"] == 2
    assert {answer["progress"] for answer in seen} <= {"queued", "loading the model", "turn 1 of 2", "turn 2 of 2",
                                                       "done"}
    assert not maps_libtorch(live.process.pid)
    assert any(maps_libtorch(pid) for pid in process_tree(live.consumer.pid))
