"""The runs list (/runs/): what it shows, its filters, access, and the compare form."""
from runs.training_runs.models import Run, RunStatus
from tests.support.telemetry import add_metrics


def test_the_list_shows_status_progress_and_last_reward(logged_in, run):
    Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING, current_step=3)
    add_metrics(run, 2, rollout__reward_mean=0.25)
    add_metrics(run, 3, rollout__reward_mean=0.625)
    html = logged_in.get("/runs/").content.decode()
    assert "r1" in html and "status-running" in html
    assert "3 / 5" in html  # step / max_steps from the run's config
    assert "0.625" in html and "0.250" not in html  # the newest reward only


def test_a_run_without_metrics_shows_no_reward(logged_in, run):
    html = logged_in.get("/runs/").content.decode()
    assert '<span class="muted">—</span>' in html


def test_another_users_runs_are_not_listed(logged_in, run, other_user, library_for):
    theirs = library_for(other_user, "theirs")["run"]
    html = logged_in.get("/runs/").content.decode()
    assert run.name in html and theirs.name not in html


def test_staff_see_everyones_runs(client, staff_user, run):
    client.force_login(staff_user)
    assert "r1" in client.get("/runs/").content.decode()


def test_the_status_filter_keeps_only_that_status(logged_in, run, owner, library_for):
    queued = library_for(owner, "second")["run"]
    Run.objects.filter(pk=queued.pk).update(status=RunStatus.QUEUED)
    html = logged_in.get("/runs/?status=queued").content.decode()
    assert "second-run" in html and ">r1<" not in html
    assert '<option value="queued" selected>' in html


def test_the_text_filter_matches_name_dataset_and_id(logged_in, run, owner, library_for):
    other = library_for(owner, "zebra")["run"]
    assert "zebra-run" not in logged_in.get("/runs/?q=r1").content.decode()
    by_dataset = logged_in.get("/runs/?q=zebra-data").content.decode()
    assert "zebra-run" in by_dataset and ">r1<" not in by_dataset
    assert "zebra-run" in logged_in.get(f"/runs/?q={other.pk}").content.decode()


def test_an_unknown_status_filter_is_ignored(logged_in, run):
    response = logged_in.get("/runs/?status=<bogus>")
    assert response.status_code == 200 and "r1" in response.content.decode()


def test_filters_that_match_nothing_say_so(logged_in, run):
    html = logged_in.get("/runs/?q=nothing-like-this").content.decode()
    assert "No runs match these filters" in html and "Show all runs" in html


def test_an_empty_list_says_what_to_do(logged_in):
    html = logged_in.get("/runs/").content.decode()
    assert "No runs yet" in html and 'href="/runs/new/"' in html


def test_each_run_can_be_ticked_for_comparison(logged_in, run):
    html = logged_in.get("/runs/").content.decode()
    assert 'action="/compare/"' in html
    assert f'name="runs" value="{run.pk}"' in html


def test_the_list_needs_a_login(client, db):
    response = client.get("/runs/")
    assert response.status_code == 302 and response.url.startswith("/login/")


def test_run_names_are_escaped(logged_in, run):
    Run.objects.filter(pk=run.pk).update(name="<img src=x onerror=alert(1)>")
    html = logged_in.get("/runs/").content.decode()
    assert "<img src=x" not in html and "&lt;img src=x" in html
