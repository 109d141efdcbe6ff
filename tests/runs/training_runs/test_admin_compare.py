"""The Run admin: columns, filters, the "Compare selected runs" action, read-only telemetry."""
import pytest

from runs.alarms.models import Alarm
from runs.training_runs.models import Run, RunReward
from runs.telemetry.models import Sample
from tests.support.telemetry import add_points
from worker.trainer.config import TrainingConfig as ConfigSchema

CHANGELIST = "/admin/runs/run/"


@pytest.fixture
def three_runs(run, owner, dataset, reward):
    made = [run]
    for name, model in [("r2", "Qwen/Qwen2.5-0.5B-Instruct"), ("r3", ConfigSchema().model)]:
        extra = Run.objects.create(owner=owner, name=name, dataset=dataset,
                                   config=ConfigSchema(model=model).model_dump())
        RunReward.objects.create(run=extra, reward_function=reward)
        made.append(extra)
    return made


def run_action(client, runs):
    return client.post(CHANGELIST, {"action": "compare_selected_runs", "_selected_action": [r.pk for r in runs]})


def test_the_compare_action_leads_to_the_compare_page_with_the_selected_runs(admin_client_for_staff, three_runs):
    response = run_action(admin_client_for_staff, three_runs)
    assert response.status_code == 302
    ids = ",".join(str(r.pk) for r in sorted(three_runs, key=lambda r: r.pk))
    assert response["Location"] == f"/compare/?runs={ids}"
    page = admin_client_for_staff.get(response["Location"])
    assert page.status_code == 200
    assert b"Comparing 3 runs" in page.content


def test_the_compare_action_with_one_run_explains_how_many_to_select(admin_client_for_staff, three_runs):
    response = run_action(admin_client_for_staff, three_runs[:1])
    assert response.status_code == 302 and response["Location"] == CHANGELIST
    followed = admin_client_for_staff.get(CHANGELIST)
    assert "Select 2 to 8 runs to compare (1 selected)." in followed.content.decode()


def test_the_changelist_shows_model_steps_and_best_reward(admin_client_for_staff, three_runs):
    add_points(three_runs[0], "rollout/reward_mean", range(5), value=lambda s: [0.1, 0.7, 0.3, 0.2, 0.5][s])
    html = admin_client_for_staff.get(CHANGELIST).content.decode()
    for header in ("Status", "Dataset", "Model", "Steps", "Best reward"):
        assert header in html
    assert "0.7" in html and "Qwen/Qwen2.5-0.5B-Instruct" in html


def test_the_changelist_filters_by_model_and_searches_by_name(admin_client_for_staff, three_runs):
    filtered = admin_client_for_staff.get(CHANGELIST, {"model": "Qwen/Qwen2.5-0.5B-Instruct"})
    assert filtered.status_code == 200
    assert [run.name for run in filtered.context["cl"].result_list] == ["r2"]
    searched = admin_client_for_staff.get(CHANGELIST, {"q": "r3"})
    assert [run.name for run in searched.context["cl"].result_list] == ["r3"]
    by_status = admin_client_for_staff.get(
        CHANGELIST, {"status__exact": "created", "owner__id__exact": three_runs[0].owner.pk})
    assert len(by_status.context["cl"].result_list) == 3


def test_the_run_page_links_to_its_metrics_and_samples_and_lists_latest_values(admin_client_for_staff, run):
    add_points(run, "train/loss", range(4), value=lambda s: 2.5 - s)
    Sample.objects.create(run=run, step=3, group=0, prompt="What is 2+2?", completion="4")
    html = admin_client_for_staff.get(f"{CHANGELIST}{run.pk}/change/").content.decode()
    assert f"/admin/runs/metricpoint/?run__id__exact={run.pk}" in html
    assert f"/admin/runs/sample/?run__id__exact={run.pk}" in html
    assert "train/loss" in html and "-0.5" in html
    samples = admin_client_for_staff.get("/admin/runs/sample/", {"run__id__exact": run.pk})
    assert samples.status_code == 200 and "What is 2+2?" in samples.content.decode()
    metrics = admin_client_for_staff.get("/admin/runs/metricpoint/", {"run__id__exact": run.pk})
    assert metrics.status_code == 200 and len(metrics.context["cl"].result_list) == 4


def test_telemetry_is_read_only_in_the_admin(admin_client_for_staff, run):
    sample = Sample.objects.create(run=run, step=1, group=0, prompt="p", completion="c")
    response = admin_client_for_staff.post(f"/admin/runs/sample/{sample.pk}/change/", {"completion": "edited"})
    assert response.status_code == 403
    sample.refresh_from_db()
    assert sample.completion == "c"


def test_a_runs_alarms_show_read_only_on_its_admin_page(admin_client_for_staff, run):
    Alarm.objects.create(run=run, kind="truncation", step=6, message="64% of completions cut", values={"x": 0.64})
    html = admin_client_for_staff.get(f"/admin/runs/run/{run.pk}/change/").content.decode()
    assert "64% of completions cut" in html and "truncation" in html
    listed = admin_client_for_staff.get(f"/admin/runs/alarm/?run__id__exact={run.pk}").content.decode()
    assert "64% of completions cut" in listed
