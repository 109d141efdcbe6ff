"""The compare page's frame: a valid selection renders the page; no, bad or hidden runs render
the help that says how to pick runs, with a 4xx naming the problem."""
import json

import pytest
from django.test import Client

from runs.training_runs.models import Run


@pytest.fixture
def owner_client(owner):
    client = Client()
    client.force_login(owner)
    return client


@pytest.fixture
def second_run(run):
    return Run.objects.create(owner=run.owner, name="r2", dataset=run.dataset, config=run.config)


def test_a_valid_selection_renders_the_page_with_the_runs_and_the_api_to_read(owner_client, run, second_run):
    response = owner_client.get("/compare/", {"runs": f"{second_run.pk},{run.pk}"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "Comparing 2 runs" in html and "r1" in html and "r2" in html
    data = json.loads(html.split('id="compare-data" type="application/json">')[1].split("</script>")[0])
    assert data["runs"] == [second_run.pk, run.pk]
    assert data["api"] == "/api/compare/" and data["samples_api"] == "/api/compare/samples/"


def test_no_selection_explains_how_to_pick_runs_and_offers_recent_ones(owner_client, run):
    response = owner_client.get("/compare/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'href="/runs/"' in html and "/compare/?runs=3,5,7" in html
    assert f'value="{run.pk}"' in html


def test_a_ticked_form_becomes_one_comma_separated_address(owner_client):
    response = owner_client.get("/compare/?runs=4&runs=9")
    assert response.status_code == 302 and response["Location"] == "/compare/?runs=4,9"


@pytest.mark.parametrize("runs, message", [("7", "Pick at least 2"), ("1,zz", "&#x27;zz&#x27; is not a run id")])
def test_a_bad_selection_is_a_400_that_says_what_is_wrong(owner_client, runs, message):
    response = owner_client.get("/compare/", {"runs": runs})
    assert response.status_code == 400
    assert message in response.content.decode() and 'href="/runs/"' in response.content.decode()


def test_a_run_of_another_user_is_a_404_naming_the_id(owner_client, run, other_user, library_for):
    hidden = library_for(other_user, "theirs")["run"]
    response = owner_client.get("/compare/", {"runs": f"{run.pk},{hidden.pk}"})
    assert response.status_code == 404
    assert f"No run with id {hidden.pk}" in response.content.decode()
    assert "theirs-run" not in response.content.decode()


def test_logged_out_visitors_are_sent_to_log_in(client, run):
    response = client.get("/compare/", {"runs": "1,2"})
    assert response.status_code == 302 and response["Location"].startswith("/login/")
