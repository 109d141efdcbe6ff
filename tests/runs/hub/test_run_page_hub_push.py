"""The run page's Hub push as the server renders it: the form (the token a password field), the
list of pushes with what the page's script starts from, and the URLs it posts to and polls."""
import json
import re

from runs.hub.models import HubPush
from tests.support.telemetry import add_checkpoint


def page_data(response) -> dict:
    html = response.content.decode()
    embedded = re.search(r'<script id="run-data" type="application/json">(.*?)</script>', html, re.S)
    return json.loads(embedded.group(1))


def test_the_page_has_the_push_form_and_the_list_of_pushes(logged_in, run, settings):
    settings.HF_HUB_ENDPOINT = "https://hub.example.org"
    html = logged_in.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="hub-push-form"' in html and 'id="hub-pushes-table"' in html and "js/run_hub_push.js" in html
    token_input = re.search(r'<input id="hub-token"[^>]*>', html).group(0)
    assert 'type="password"' in token_input and 'autocomplete="off"' in token_input
    assert re.search(r'<input type="checkbox" id="hub-private"[^>]*checked', html)
    assert "<code>https://hub.example.org</code>" in html  # where the push goes


def test_the_page_embeds_the_runs_pushes_and_where_to_post_and_poll(logged_in, run, owner, settings):
    settings.HF_HUB_ENDPOINT = "https://huggingface.co"
    checkpoint = add_checkpoint(run, 4, "/nowhere/step-4")
    older = HubPush.objects.create(run=run, checkpoint=checkpoint, repo_id="me/first", part="model",
                                   requested_by=owner, status="failed", detail="the Hub refused the token")
    newer = HubPush.objects.create(run=run, checkpoint=checkpoint, repo_id="me/second", part="all",
                                   requested_by=owner, detail="copying files 1/3")
    data = page_data(logged_in.get(f"/runs/{run.pk}/"))
    assert [(p["id"], p["status"], p["step"]) for p in data["pushes"]] == [(newer.pk, "pushing", 4),
                                                                            (older.pk, "failed", 4)]
    assert data["urls"]["push"] == f"/api/runs/{run.pk}/checkpoints/{{id}}/push/"
    assert data["urls"]["pushes"] == f"/api/runs/{run.pk}/pushes/"
    assert data["hub_endpoint"] == "https://huggingface.co"
