"""How a run's samples are browsed by step: an index in browsing order, read as a range (EXPLAIN
QUERY PLAN on SQLite shows it and no sort), and the steps' list as seeks through it."""
import pytest
from django.db import connection

from runs.training_runs.models import Run
from runs.telemetry.models import Sample
from runs.telemetry.models import SAMPLE_STEPS_SQL
from tests.support.telemetry import add_sample

INDEX = "sample_run_step_group"


def sqlite_plan(sql: str, params) -> str:
    if connection.vendor != "sqlite":
        pytest.skip("reads SQLite's query plan; PostgreSQL's is shown by python -m bench.samples --explain")
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
        return "\n".join(str(row[-1]) for row in cursor.fetchall())


def queryset_plan(queryset) -> str:
    sql, params = queryset.query.sql_with_params()
    return sqlite_plan(sql, params)


@pytest.fixture
def browsed(run, other_run):
    for step in (1, 3, 7):
        for group in (1, 0):
            add_sample(run, step, group)
    add_sample(other_run, 5)
    return run


@pytest.fixture
def other_run(owner, dataset, config):
    return Run.objects.create(owner=owner, name="r2", dataset=dataset, config_template=config,
                              config=dict(config.values))


def test_the_migrations_index_samples_in_browsing_order(db):
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, Sample._meta.db_table)
    assert constraints[INDEX]["columns"] == ["run_id", "step", "group", "id"]
    assert "sample_run_step" not in constraints  # its prefix, which it replaces


def test_a_steps_page_reads_a_range_of_the_index_without_sorting(browsed):
    plan = queryset_plan(browsed.samples.filter(step=3)[:1000])
    assert INDEX in plan and "TEMP B-TREE" not in plan, plan


def test_the_runs_pages_read_the_index_in_order_without_sorting(browsed):
    plan = queryset_plan(browsed.samples.all()[200:300])
    assert INDEX in plan and "TEMP B-TREE" not in plan, plan


def test_the_steps_list_seeks_through_the_index_instead_of_reading_every_sample(browsed):
    plan = sqlite_plan(SAMPLE_STEPS_SQL.format(table=Sample._meta.db_table), [browsed.pk, -1, browsed.pk])
    # The first step and each next one: a SEARCH of the index; no SCAN of the samples' table.
    assert plan.count(f"SEARCH runs_sample USING COVERING INDEX {INDEX}") == 1, plan
    assert plan.count(f"SEARCH later USING COVERING INDEX {INDEX}") == 1, plan
    assert "SCAN runs_sample" not in plan and "SCAN later" not in plan, plan


def test_the_steps_list_is_each_step_of_the_run_once_in_order(browsed):
    assert Sample.objects.steps_of(browsed.pk) == [1, 3, 7]
    assert Sample.objects.steps_of(browsed.pk, after=3) == [7]
    assert Sample.objects.steps_of(browsed.pk, after=7) == []


def test_a_run_without_samples_has_no_steps(run):
    assert Sample.objects.steps_of(run.pk) == []
