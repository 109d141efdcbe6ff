"""Evaluation outcomes in the admin: listed with their prompt and pass counts, read-only."""
from runs.evaluation.models import EvalOutcome
from tests.support.evaluations import store_evaluations


def test_evaluation_outcomes_are_listed_and_read_only(admin_client_for_staff, run):
    store_evaluations(run, {0: [True, False]})
    listed = admin_client_for_staff.get(f"/admin/runs/evaloutcome/?run__id__exact={run.pk}").content.decode()
    assert "What is 1 + 1?" in listed and "What is 2 + 2?" in listed
    outcome = EvalOutcome.objects.get(run=run, index=0)
    response = admin_client_for_staff.post(f"/admin/runs/evaloutcome/{outcome.pk}/change/", {"prompt": "edited"})
    assert response.status_code == 403
