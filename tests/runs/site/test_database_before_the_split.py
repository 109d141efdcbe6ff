"""A database made before the control plane was split by domain (c95cf7c: one app, layer folders)
migrates with nothing to apply and loses nothing. The app's label stays `runs`, so its tables,
migration history, content types, permissions and admin URLs keep their names; the models only
moved between Python modules. The fixture is that commit's SQLite database, one row in every
table of the app, dumped as SQL (tests/runs/site/fixtures/)."""
import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = Path(__file__).parent / "fixtures" / "database_before_the_split.sql"

pytestmark = pytest.mark.no_services

READ_EVERY_ROW = """
import json
from django.apps import apps
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.urls import reverse
models = list(apps.get_app_config("runs").get_models())
rows = {}
for model in models:
    # Every field of every row, through the model where it lives now.
    rows[model._meta.db_table] = [[str(getattr(row, field.attname)) for field in model._meta.concrete_fields]
                                  for row in model.objects.order_by("pk")]
print(json.dumps({
    "modules": sorted({model.__module__ for model in models}),
    "rows": rows,
    "content_types": sorted(ContentType.objects.filter(app_label="runs").values_list("model", flat=True)),
    "models": sorted(model._meta.model_name for model in models),
    "permissions": Permission.objects.filter(content_type__app_label="runs").count(),
    "admin": reverse("admin:runs_run_changelist"),
}))
"""


def table_rows(path: Path) -> dict[str, list]:
    with closing(sqlite3.connect(path)) as db:
        tables = [name for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        return {table: sorted(db.execute(f'SELECT * FROM "{table}"').fetchall(), key=repr) for table in tables}


def manage(database: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "DATA_DIR": str(database.parent)}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=240)


@pytest.fixture(scope="module")
def migrated(tmp_path_factory):
    """The old database, its rows as stored, then migrated by today's code."""
    database = tmp_path_factory.mktemp("before-the-split") / "db.sqlite3"
    with closing(sqlite3.connect(database)) as db:
        db.executescript(FIXTURE.read_text())
    stored = table_rows(database)
    result = manage(database, "migrate", "--no-input")
    return database, stored, result


def test_it_migrates_with_nothing_to_apply(migrated):
    _, _, result = migrated
    assert result.returncode == 0, result.stderr
    assert "No migrations to apply" in result.stdout


def test_every_table_keeps_every_row(migrated):
    database, stored, _ = migrated
    assert sum(len(rows) for table, rows in stored.items() if table.startswith("runs_")) >= 20
    assert table_rows(database) == stored


def test_the_models_have_no_change_a_migration_would_make(migrated):
    database, _, _ = migrated
    result = manage(database, "makemigrations", "--check", "--dry-run")
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_row_reads_through_the_models_in_their_domains(migrated):
    database, stored, _ = migrated
    result = manage(database, "shell", "-c", READ_EVERY_ROW)
    assert result.returncode == 0, result.stderr
    read = json.loads(result.stdout.strip().splitlines()[-1])
    assert all(table in stored and len(rows) == len(stored[table]) and rows
               for table, rows in read["rows"].items())  # every model's table, every row, none empty
    assert not any(module.startswith("runs.models.") for module in read["modules"])  # in domain packages
    assert read["content_types"] == read["models"]  # the same names: permissions and admin URLs hold
    ours = {row[0] for row in stored["django_content_type"] if row[1] == "runs"}
    assert read["permissions"] == sum(1 for row in stored["auth_permission"] if row[1] in ours)
    assert read["admin"] == "/admin/runs/run/"
