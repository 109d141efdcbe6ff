"""Evaluation on the server-rendered pages: the run page embeds its evaluations and the API its
panel reads, and says how to turn evaluation on when the run has none; the compare page names
the endpoints of its "Follow an evaluation example" section."""
import json

import pytest

from runs.training_runs.models import Run
from tests.support.run_pages import page_data
from tests.support.evaluations import FIVE_CLASSES, store_evaluations


@pytest.fixture
def evaluating(run):
    Run.objects.filter(pk=run.pk).update(config={**run.config, "eval_steps": 10, "eval_samples": 4})
    return Run.objects.get(pk=run.pk)


def test_the_run_page_embeds_its_evaluations_and_the_urls_its_panel_reads(logged_in, evaluating):
    store_evaluations(evaluating, FIVE_CLASSES)
    data = page_data(logged_in.get(f"/runs/{evaluating.pk}/"))["evaluation"]
    assert data["configured"] is True and data["eval_steps"] == 10 and data["eval_samples"] == 4
    assert [row["step"] for row in data["evaluations"]] == [0, 10, 20]
    assert data["evaluations"][1]["flipped_to_pass"] == 2
    assert data["urls"] == {
        "evaluations": f"/api/runs/{evaluating.pk}/evaluations/",
        "evaluation": f"/api/runs/{evaluating.pk}/evaluations/{{step}}/",
        "examples": f"/api/runs/{evaluating.pk}/eval-examples/",
        "example": f"/api/runs/{evaluating.pk}/eval-examples/{{index}}/",
    }


def test_a_run_that_does_not_evaluate_says_how_to_turn_it_on(logged_in, run):
    html = logged_in.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="eval-off"' in html and "eval_steps" in html and "eval_holdout_fraction" in html
    assert "edit the run before starting it" in html


def test_a_started_run_that_does_not_evaluate_is_to_be_cloned(logged_in, run):
    Run.objects.filter(pk=run.pk).update(status="succeeded")
    assert "clone this run to change its settings" in logged_in.get(f"/runs/{run.pk}/").content.decode()


def test_a_run_that_will_evaluate_says_when(logged_in, evaluating):
    html = logged_in.get(f"/runs/{evaluating.pk}/").content.decode()
    assert 'id="eval-off"' not in html
    assert "the first runs before training starts (step 0), then every 10 steps" in " ".join(html.split())
    assert "js/run_evaluation.js" in html and 'href="#evaluation"' in html


def test_the_compare_page_names_the_evaluation_example_endpoints(logged_in, run):
    second = Run.objects.create(owner=run.owner, name="r2", dataset=run.dataset, config=run.config)
    html = logged_in.get("/compare/", {"runs": f"{run.pk},{second.pk}"}).content.decode()
    data = json.loads(html.split('id="compare-data" type="application/json">')[1].split("</script>")[0])
    assert data["eval_examples_api"] == "/api/compare/eval-examples/"
    assert data["eval_example_api"] == "/api/compare/eval-example/"
    assert 'id="follow-example"' in html and "js/compare_evaluation.js" in html
