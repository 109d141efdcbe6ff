"""Pages of a run's samples, read ids first (runs/telemetry/sample_pagination.py): the same rows, in
the same order, at every depth as the plain ordered list; the skipped rows are index entries."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from runs.telemetry.sample_pagination import IdsFirstPaginator
from tests.support.telemetry import add_sample


@pytest.fixture(params=["shallow", "deep"])
def read_as(request, monkeypatch):
    """Every page read as a shallow one (one query), then as a deep one (ids first)."""
    if request.param == "deep":
        monkeypatch.setattr(IdsFirstPaginator, "deep_from", 0)
    return request.param


@pytest.fixture
def stored(run, read_as):
    # Stored out of order, so that ids alone do not give the browsing order.
    return [add_sample(run, step, group, completion=f"s{step} g{group}") for step in (3, 1, 2) for group in (1, 0)]


def page(api, run, **params):
    return api.get(f"/api/runs/{run.pk}/samples/", {"page_size": 4, **params})


def test_every_page_holds_the_rows_of_the_ordered_list_in_order(owner_api, run, stored):
    ordered = list(run.samples.values_list("id", flat=True))
    first, last = page(owner_api, run).json(), page(owner_api, run, page=2).json()
    assert [s["id"] for s in first["results"] + last["results"]] == ordered
    assert [(s["step"], s["group"]) for s in first["results"]][:3] == [(1, 0), (1, 1), (2, 0)]
    assert first["count"] == 6 and first["next"] and last["next"] is None
    assert first["results"][0]["completion"] == "s1 g0"


def test_a_filtered_page_is_read_the_same_way(owner_api, run, stored):
    body = page(owner_api, run, step=3).json()
    assert [(s["step"], s["group"]) for s in body["results"]] == [(3, 0), (3, 1)]


def test_a_page_past_the_end_is_still_404(owner_api, run, stored):
    assert page(owner_api, run, page=3).status_code == 404


def test_the_rows_skipped_to_reach_a_deep_page_are_read_from_the_index_alone(run, stored, monkeypatch):
    if connection.vendor != "sqlite":
        pytest.skip("reads SQLite's query plan; PostgreSQL's is shown by python -m bench.samples --explain")
    monkeypatch.setattr(IdsFirstPaginator, "deep_from", 4)
    with CaptureQueriesContext(connection) as queries:
        rows = IdsFirstPaginator(run.samples.all(), 2).page(3).object_list
    assert [(row.step, row.group) for row in rows] == [(3, 0), (3, 1)]
    skipping = next(q["sql"] for q in queries.captured_queries if "OFFSET" in q["sql"])
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {skipping}")
        plan = "\n".join(str(row[-1]) for row in cursor.fetchall())
    assert "COVERING INDEX sample_run_step_group" in plan and "TEMP B-TREE" not in plan, plan


def test_a_shallow_page_is_read_in_one_query(run, stored, monkeypatch):
    monkeypatch.setattr(IdsFirstPaginator, "deep_from", 5)
    with CaptureQueriesContext(connection) as queries:
        rows = IdsFirstPaginator(run.samples.all(), 2).page(3).object_list
        assert [(row.step, row.group) for row in rows] == [(3, 0), (3, 1)]
    assert len([q for q in queries.captured_queries if "OFFSET" in q["sql"]]) == 1
    assert not [q for q in queries.captured_queries if " IN (" in q["sql"]]
