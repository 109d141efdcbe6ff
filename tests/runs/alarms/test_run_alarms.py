"""Alarms on the pages: the run page's panel starts from the alarms the run raised, and the runs
list marks each run with the kinds it raised, their messages in the mark's tooltip."""
import html as html_text

from django.db import connection
from django.test.utils import CaptureQueriesContext

from runs.alarms.models import Alarm
from runs.training_runs.models import Run
from tests.support.run_pages import page_data


def alarm(run, kind, step, message, stopped=False):
    return Alarm.objects.create(run=run, kind=kind, step=step, message=message, values={"x": 1.0},
                                stopped_run=stopped)


def test_the_run_page_embeds_its_alarms_and_where_to_fetch_them(logged_in, run):
    raised = alarm(run, "entropy_collapse", 20, "entropy 0.012 nats/token below 0.05", stopped=True)
    response = logged_in.get(f"/runs/{run.pk}/")
    data = page_data(response)
    assert [(a["id"], a["kind"], a["step"], a["stopped_run"]) for a in data["alarms"]] == [
        (raised.pk, "entropy_collapse", 20, True)]
    assert data["alarm_url"] == f"/api/runs/{run.pk}/alarms/"
    assert data["alarm_kinds"]["entropy_collapse"].startswith("entropy below")
    html = response.content.decode()
    assert '<section id="alarms"' in html and 'id="alarms" class="run-alarms card" aria-labelledby' in html
    assert "js/run_alarms.js" in html


def test_the_alarms_panel_is_hidden_while_there_is_none(logged_in, run):
    response = logged_in.get(f"/runs/{run.pk}/")
    assert page_data(response)["alarms"] == []
    assert 'aria-labelledby="alarms-heading" hidden>' in response.content.decode()


def test_the_runs_list_marks_a_run_with_the_kinds_it_raised(logged_in, run):
    alarm(run, "truncation", 4, "64% of completions cut <at> the length limit")
    alarm(run, "sampler_drift", 7, "KL to the sampler 1.8 above 1 at step 7", stopped=True)
    alarm(run, "sampler_drift", 9, "KL to the sampler 2.5 above 1 at step 9")
    page = logged_in.get("/runs/").content.decode()
    assert 'data-alarms="sampler_drift truncation"' in page
    title = html_text.unescape(page.split('class="alarm-mark"')[1].split('title="')[1].split('"')[0])
    assert title == ("sampler_drift at step 9 (2 alarms), stopped the run: KL to the sampler 2.5 above 1 at step 9\n"
                     "truncation at step 4: 64% of completions cut <at> the length limit")
    assert "cut <at>" not in page  # escaped


def test_a_run_without_alarms_has_no_mark(logged_in, run):
    assert "alarm-mark" not in logged_in.get("/runs/").content.decode()


def test_the_runs_list_reads_alarms_in_one_query_for_all_runs(logged_in, run):
    def queries():
        with CaptureQueriesContext(connection) as captured:
            logged_in.get("/runs/")
        return len(captured)

    alarm(run, "truncation", 4, "t")
    few = queries()
    for n in range(3):
        other = Run.objects.create(owner=run.owner, name=f"more-{n}", dataset=run.dataset, config=dict(run.config))
        alarm(other, "entropy_collapse", n, "e")
    assert queries() == few
