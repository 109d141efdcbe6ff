"""No metric name spelled out beside the catalogue (worker/trainer/metric_names.py): the trainer,
the control plane and the charts' scripts use its constants, so that a renamed metric fails here
and in the tests of its readers, not silently on a chart. Python is read with `ast` (every str
constant, f-strings' parts included); the browser's scripts with a small tokenizer (string
literals and regex literals, comments left out). client/ and bench/ are not scanned: the client
needs nothing but HTTP, and bench's synthetic loads make up names of their own."""
import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PREFIXES = ("train", "rollout", "eval", "system", "async", "episode", "judge")
METRIC_NAME = re.compile(rf"^({'|'.join(PREFIXES)})/\S*$")
PYTHON_FOLDERS = ("worker/trainer", "runs")
CATALOGUE = "worker/trainer/metric_names.py"
SCRIPTS = "frontend/static/js"
GENERATED = "frontend/static/js/metric_names.js"
# A literal that is allowed to stay, as (file, literal): with why. Keep it empty if you can.
ALLOWED: dict[tuple[str, str], str] = {}

JS_TOKENS = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`", re.S)
JS_REGEX_NAME = re.compile(rf"\b({'|'.join(PREFIXES)})\\/")


def python_literals(source: str) -> list[str]:
    return [node.value for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and METRIC_NAME.match(node.value)]


def javascript_literals(source: str) -> list[str]:
    """Metric names in the script's string and template literals, and regex literals that spell
    one (`/^rollout\\/reward/`); comments are prose and left out."""
    found, code, last = [], [], 0
    for token in JS_TOKENS.finditer(source):
        code.append(source[last:token.start()])
        last = token.end()
        text = token.group()
        if text[0] in "\"'`" and METRIC_NAME.match(text[1:-1]):
            found.append(text[1:-1])
    code.append(source[last:])
    return found + [match.group() for match in JS_REGEX_NAME.finditer("".join(code))]


def spelled_out() -> list[tuple[str, str]]:
    python = [path for folder in PYTHON_FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))]
    found = [(str(path.relative_to(ROOT)), literal) for path in python if str(path.relative_to(ROOT)) != CATALOGUE
             for literal in python_literals(path.read_text())]
    scripts = sorted((ROOT / SCRIPTS).glob("*.js"))
    found += [(str(path.relative_to(ROOT)), literal) for path in scripts if str(path.relative_to(ROOT)) != GENERATED
              for literal in javascript_literals(path.read_text())]
    return found


def test_no_metric_name_is_spelled_out_beside_the_catalogue():
    found = [pair for pair in spelled_out() if pair not in ALLOWED]
    assert found == [], ("a metric name is spelled out: use the constant of worker/trainer/metric_names.py (in "
                         "Python) or window.MetricNames (in the browser's scripts; after a change to the catalogue, "
                         f"run `python -m scripts.write_metric_names`): {found}")


def test_each_allowed_literal_is_still_there():
    """An allowance no longer needed is taken off the list, so that the list stays the truth."""
    assert [pair for pair in ALLOWED if pair not in spelled_out()] == []


@pytest.mark.parametrize("source, expected", [
    ('metrics = {"train/loss": 1.0}\n', ["train/loss"]),
    ('key = f"rollout/reward/{name}_mean"\n', ["rollout/reward/"]),
    ('"""A docstring naming train/loss in a sentence."""\n', []),
    ('path = "runs/7/checkpoints"\n', []),
])
def test_the_python_scan_sees_names_in_strings_and_f_strings(source, expected):
    assert python_literals(source) == expected


@pytest.mark.parametrize("source, expected", [
    ('const a = "train/loss";', ["train/loss"]),
    ("const b = `rollout/reward/${name}_std`;", ["rollout/reward/${name}_std"]),
    ("const c = /^eval\\/pass@(\\d+)$/;", ["eval\\/"]),
    ('// e.g. {key: "rollout/reward_mean"}\nconst d = 1; /* "eval/pass@1" */', []),
    ('const e = "http://x//y"; const f = Metric.TRAIN_LOSS;', []),
])
def test_the_script_scan_sees_strings_templates_and_regexes_not_comments(source, expected):
    assert javascript_literals(source) == expected
