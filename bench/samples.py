"""Browsing a run's completions with 1,000 and 1,000,000 stored samples, on SQLite and
PostgreSQL, before and after the browsing index (runs/migrations/0014_sample_browse_index.py).

Not a test: for each database it starts a child process on a fresh database (migrated), stores
two runs straight into it with raw bulk inserts — the demo's shape (16 completions a step, 63
steps: 1,008 samples) and a GPU run that keeps everything (125 groups of 8, 1,000 a step, 1,000
steps: 1,000,000) — and times what the run page asks, through Django's views in the process
(`django.test.Client`, no network):

- step page: `GET /api/runs/<id>/samples/?step=<middle>&page_size=100`, one page of a step;
- whole step: the same with `page_size=1000`, what the completions browser fetches for a step;
- step list: `GET /api/runs/<id>/sample-steps/`; run page: `GET /runs/<id>/` (it embeds the list);
- first page / last page: `GET /api/runs/<id>/samples/?page=1` and the last page (page_size 100).

"before" is the same database with the (run, step) index that 0014 replaces, the steps listed
by DISTINCT and pages read as whole rows at their OFFSET, as they were; "after" is the code as it
is (runs/telemetry/models.py, runs/telemetry/sample_pagination.py). Rounds alternate after and before
(ABBA) so that the load of a shared machine weighs on both; medians of the requests after a warm-up;
ratios are within this run. Target: a step's samples in ≤ 200 ms with 1,000,000 stored.

    .venv/bin/python -m bench.samples                 # both databases, about 3 minutes
    .venv/bin/python -m bench.samples --only sqlite   # or postgresql
    .venv/bin/python -m bench.samples --explain       # also the plans of the step page and step list
    .venv/bin/python -m bench.samples --smoke         # SQLite, "1e6" of 1,000 samples, 1 request a case
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from bench.ingest import PostgresDatabase, postgres_problem
from bench.report import fmt, markdown_table, median
from bench.smoke import add_smoke_options

SHAPES = {"1e3": (63, 16), "1e6": (1000, 1000)}  # stored samples: (steps, samples a step)
GROUP_SIZE = 8
CASES = ("step page", "whole step", "step list", "run page", "first page", "last page")
TARGET_MS = 200.0
COLUMNS = ("run_id", "step", '"group"', "prompt", "completion", "rewards", "total_reward", "advantage",
           "model_version", "staleness", "num_tokens", "finish_reason", "turns", "end_reason")
PROMPT = ("<|im_start|>user\nNatalia sold clips to {n} of her friends in April, and then she sold half as many "
          "clips in May. How many clips did Natalia sell altogether?<|im_end|>\n")
COMPLETION = ("In April she sold {n} clips. In May she sold half as many, {h}. Altogether she sold {n} + {h} = {t} "
              "clips, which is the answer to the question.\n#### {t}")


# --- the child: one database --------------------------------------------------------------

def first_step_rows(run_id: int, per_step: int) -> list[tuple]:
    """Step 1's rows as the ingest stores them: a prompt a group, a completion each, two rewards."""
    rows = []
    for index in range(per_step):
        group, n = index // GROUP_SIZE, 7 + index
        total = float(index % 2)
        rows.append((run_id, 1, group, PROMPT.format(n=100 + group), COMPLETION.format(n=n, h=n // 2, t=n + n // 2),
                     json.dumps({"accuracy": total, "format": 1.0}), total + 1.0, total - 0.5, 1, 0, 60, "stop",
                     None, ""))
    return rows


def insert_samples(connection, run_id: int, steps: int, per_step: int) -> None:
    """Step 1 row by row, then steps 2..`steps` as copies of it made by the database itself
    (one INSERT ... SELECT over a counter): a million rows in seconds on either database."""
    columns, placeholders = ", ".join(COLUMNS), ", ".join(["%s"] * len(COLUMNS))
    copied = ", ".join("counter.step" if column == "step" else f"first.{column}" for column in COLUMNS)
    with connection.cursor() as cursor:
        cursor.executemany(f"INSERT INTO runs_sample ({columns}) VALUES ({placeholders})",
                           first_step_rows(run_id, per_step))
        cursor.execute(
            "WITH RECURSIVE counter(step) AS (SELECT 2 UNION ALL SELECT step + 1 FROM counter WHERE step < %s) "
            f"INSERT INTO runs_sample ({columns}) SELECT {copied} FROM runs_sample AS first, counter "
            "WHERE first.run_id = %s AND first.step = 1 ORDER BY counter.step, first.id", [steps, run_id])


def use_index(connection, browse: bool) -> None:
    """The browsing index (after) or the (run, step) index it replaced (before)."""
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX IF EXISTS sample_run_step_group")
        cursor.execute("DROP INDEX IF EXISTS sample_run_step")
        if browse:
            cursor.execute('CREATE INDEX sample_run_step_group ON runs_sample (run_id, step, "group", id)')
        else:
            cursor.execute("CREATE INDEX sample_run_step ON runs_sample (run_id, step)")
        cursor.execute("VACUUM ANALYZE runs_sample" if connection.vendor == "postgresql" else "ANALYZE")


def distinct_steps(self, run_id: int, after: int | None = None) -> list[int]:
    """How the steps were listed before: DISTINCT over the run's samples."""
    samples = self.filter(run_id=run_id, **({"step__gt": after} if after is not None else {}))
    return list(samples.order_by("step").values_list("step", flat=True).distinct())


def seed_runs(connection) -> tuple[object, dict]:
    from django.contrib.auth import get_user_model

    from runs.datasets.models import Dataset
    from runs.rewards.models.function import RewardFunction
    from runs.training_runs.models import Run, RunReward
    from worker.trainer.config import TrainingConfig

    owner = get_user_model().objects.create_user("owner", password="owner-pass-123")
    dataset = Dataset.objects.create(owner=owner, name="d", source="generator", generator="arithmetic", row_count=1)
    reward = RewardFunction.objects.create(owner=owner, name="accuracy", kind="builtin", builtin="accuracy")
    runs = {}
    with connection.cursor() as cursor:  # filled without the index, which is built once after
        cursor.execute("DROP INDEX IF EXISTS sample_run_step_group")
    for label, (steps, per_step) in SHAPES.items():
        run = Run.objects.create(owner=owner, name=label, dataset=dataset,
                                 config=TrainingConfig(max_steps=steps).model_dump(mode="json"))
        RunReward.objects.create(run=run, reward_function=reward)
        started = time.perf_counter()
        insert_samples(connection, run.pk, steps, per_step)
        print(f"  {connection.vendor}: stored {steps * per_step:,} samples in {time.perf_counter() - started:.1f} s",
              file=sys.stderr, flush=True)
        runs[label] = run
    return owner, runs


def case_urls(run, steps: int, per_step: int) -> dict[str, str]:
    api, middle = f"/api/runs/{run.pk}", steps // 2
    last_page = -(-steps * per_step // 100)
    return {"step page": f"{api}/samples/?step={middle}&page_size=100",
            "whole step": f"{api}/samples/?step={middle}&page_size=1000",
            "step list": f"{api}/sample-steps/", "run page": f"/runs/{run.pk}/",
            "first page": f"{api}/samples/", "last page": f"{api}/samples/?page={last_page}"}


def timed_ms(client, url: str, repeats: int) -> list[float]:
    client.get(url)  # warm-up: caches, the plan, the pages read
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    return times


def explain(connection, run, steps: int) -> list[str]:
    from runs.telemetry.models import Sample
    from runs.telemetry.models import SAMPLE_STEPS_SQL

    prefix = "EXPLAIN QUERY PLAN " if connection.vendor == "sqlite" else "EXPLAIN "
    page_sql, page_params = run.samples.filter(step=steps // 2)[:100].query.sql_with_params()
    lines = []
    with connection.cursor() as cursor:
        for name, sql, params in (("step page", page_sql, page_params),
                                  ("step list", SAMPLE_STEPS_SQL.format(table=Sample._meta.db_table),
                                   [run.pk, -1, run.pk])):
            cursor.execute(prefix + sql, params)
            lines += [f"{connection.vendor} {name}: {row[-1]}" for row in cursor.fetchall()]
    return lines


def measure_child(repeats: int, rounds: int, want_plans: bool) -> None:
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment

    from django.core.paginator import Paginator

    from runs.telemetry.sample_pagination import IdsFirstPaginator, SamplePagination
    from runs.telemetry.models import SampleQuerySet

    setup_test_environment()  # the test client's host is allowed
    call_command("migrate", verbosity=0)
    owner, runs = seed_runs(connection)
    client = Client()
    client.force_login(owner)
    times, plans, new_steps = {}, [], SampleQuerySet.steps_of
    # Rounds alternate after and before (ABBA...), so that what else the machine runs, and what
    # the process grew to, weighs on both alike.
    order = [variant for r in range(rounds) for variant in (("after", "before") if r % 2 == 0 else ("before", "after"))]
    for variant in order:
        browse = variant == "after"
        SampleQuerySet.steps_of = new_steps if browse else distinct_steps
        SamplePagination.django_paginator_class = IdsFirstPaginator if browse else Paginator
        started = time.perf_counter()
        use_index(connection, browse)
        print(f"  {connection.vendor}: index for {variant} in {time.perf_counter() - started:.1f} s",
              file=sys.stderr, flush=True)
        for label, run in runs.items():
            steps, per_step = SHAPES[label]
            if want_plans and browse and label == "1e6" and not plans:
                plans = explain(connection, run, steps)
            for case, url in case_urls(run, steps, per_step).items():
                slow = variant == "before" and label == "1e6"
                times.setdefault((variant, label, case), []).extend(
                    timed_ms(client, url, max(2, repeats // 3) if slow else repeats))
    results = [{"variant": v, "stored": label, "case": case, "ms": median(ms)} for (v, label, case), ms in times.items()]
    print(json.dumps({"results": results, "plans": plans}))


# --- the parent: both databases, one table -----------------------------------------------

def run_child(database_url: str, args) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-samples-") as data_dir:
        url = database_url or f"sqlite:///{data_dir}/db.sqlite3"
        env = {**os.environ, "DATA_DIR": data_dir, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "controlplane.settings"}
        command = [sys.executable, "-m", "bench.samples", "--child", "--repeats", str(args.repeats),
                   "--rounds", str(args.rounds)]
        command += [flag for flag, on in (("--explain", args.explain), ("--quick", args.quick),
                                          ("--smoke", args.smoke)) if on]
        answer = subprocess.run(command, env=env, check=True,
                                stdout=subprocess.PIPE, text=True)
    return json.loads(answer.stdout.strip().splitlines()[-1])


def table_rows(backend: str, results: list[dict]) -> list[tuple]:
    ms = {(r["variant"], r["stored"], r["case"]): r["ms"] for r in results}
    rows = []
    for stored in SHAPES:
        for case in CASES:
            before, after = ms[("before", stored, case)], ms[("after", stored, case)]
            demo = ms[("after", "1e3", case)]
            rows.append((backend, stored, case, fmt(before, 1), fmt(after, 1), f"{before / after:.1f}x",
                         f"{after / demo:.1f}x"))
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=["sqlite", "postgresql"])
    parser.add_argument("--repeats", type=int, default=7, help="requests a case, a round")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of after then before")
    parser.add_argument("--quick", action="store_true", help="100,000 samples instead of 1,000,000 (a dry run)")
    parser.add_argument("--explain", action="store_true", help="print the plans of the step page and step list")
    parser.add_argument("--pg-admin-url", default=os.environ.get("BENCH_PG_ADMIN_URL",
                                                                 "postgresql://postgres@127.0.0.1:5432/postgres"))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    add_smoke_options(parser)
    args = parser.parse_args(argv)
    if args.quick:
        SHAPES["1e6"] = (100, 1000)  # still labelled 1e6: the same rows of the table, a tenth of them
    if args.smoke:  # the table's rows at the smallest: 1,000 samples "1e6", 1 request a case, one round, SQLite
        SHAPES["1e6"] = (10, 100)
        args.repeats, args.rounds, args.only = 1, 1, args.only or "sqlite"
    if args.child:
        measure_child(args.repeats, args.rounds, args.explain)
        return
    rows, plans = [], []
    if args.only in (None, "sqlite"):
        answer = run_child("", args)
        rows += table_rows("sqlite", answer["results"])
        plans += answer["plans"]
    if args.only in (None, "postgresql"):
        if problem := postgres_problem(args.pg_admin_url):
            print(f"postgresql skipped: {problem}")
        else:
            with PostgresDatabase(args.pg_admin_url) as url:
                answer = run_child(url, args)
            rows += table_rows("postgresql", answer["results"])
            plans += answer["plans"]
    print(f"\nBrowsing a run's samples (median ms a request, in-process; target: step page ≤ {TARGET_MS:.0f} ms "
          "with 1e6 stored; 'vs demo' is after at this size / after at 1e3; 1e3 is 16 samples a step, 1e6 "
          f"1,000 a step; load average at the end {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} cores)\n")
    print(markdown_table(("database", "stored", "request", "before ms", "after ms", "before/after", "vs demo"), rows))
    if plans:
        print("\n" + "\n".join(plans))


if __name__ == "__main__":
    main()
