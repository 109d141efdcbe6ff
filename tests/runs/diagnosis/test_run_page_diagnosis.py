"""What the run page gives its "Where the time goes" panel, its in-flight chart and its held-out
interval, as the server renders it: the diagnosis URL (the endpoint's, answering for this run),
the panel and its script, an anchor per config knob for a suggestion to link to, the in-flight
series among the metric names, and per evaluation the examples counted (n) and the tool use."""
from runs.training_runs.models import Run
from tests.support.run_pages import page_data
from tests.support.evaluations import store_evaluations
from tests.support.telemetry import add_metrics


def test_the_page_embeds_the_diagnosis_url_its_panel_reads(logged_in, run):
    data = page_data(logged_in.get(f"/runs/{run.pk}/"))
    assert data["urls"]["diagnosis"] == f"/api/runs/{run.pk}/diagnosis/"
    answer = logged_in.get(data["urls"]["diagnosis"])
    assert answer.status_code == 200 and answer.json()["status"] == "too_short"  # a run not started


def test_the_panel_and_its_script_are_on_the_page(logged_in, run):
    html = logged_in.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="diagnosis"' in html and 'href="#diagnosis"' in html  # and in the section links
    # Below the charts, which keep the first screen: above the evaluations.
    assert html.index('id="charts"') < html.index('id="diagnosis"') < html.index('id="evaluation"')
    assert "js/run_diagnosis.js" in html and "css/diagnosis.css" in html
    # The chart's script (and its interval) is there before the panel that builds it.
    assert html.index("js/run_evaluation_chart.js") < html.index("js/run_evaluation.js")


def test_each_config_knob_has_an_anchor_a_suggestion_links_to(logged_in, run):
    html = logged_in.get(f"/runs/{run.pk}/").content.decode()
    for knob in ("max_inflight_tasks", "max_staleness", "per_device_train_batch_size", "cpu_sharing"):
        assert f'id="config-{knob}"' in html


def test_the_in_flight_series_are_among_the_metric_names(logged_in, run):
    add_metrics(run, 1, **{"async/in_flight": 3.0, "async/queue_depth": 1.0, "async/max_inflight": 4.0})
    names = page_data(logged_in.get(f"/runs/{run.pk}/"))["metric_names"]
    assert {"async/in_flight", "async/queue_depth", "async/max_inflight"} <= set(names)


def test_each_evaluation_carries_its_examples_and_tool_use(logged_in, run):
    Run.objects.filter(pk=run.pk).update(config={**run.config, "eval_steps": 10})
    store_evaluations(run, {0: [True, False, False, False], 10: [True, True, True, False]})
    add_metrics(run, 10, **{"eval/episode/clean_tool_use": 0.75})
    rows = page_data(logged_in.get(f"/runs/{run.pk}/"))["evaluation"]["evaluations"]
    assert [(row["step"], row["examples"], row["pass_at_1"]) for row in rows] == [(0, 4, 0.25), (10, 4, 0.75)]
    assert rows[1]["metrics"]["eval/episode/clean_tool_use"] == 0.75
