"""Writes frontend/static/js/metric_names.js, the browser's copy of the metric names' catalogue
(worker/trainer/metric_names.py), so that the charts' scripts spell no name of their own.

Run `python -m scripts.write_metric_names` after changing the catalogue; the generated file is
committed, and tests/scripts/test_write_metric_names.py fails while it differs from what this
writes now. The pages load it with a plain <script> before the charts' scripts: it sets
`window.MetricNames`, each metric's constant and each family with its pattern and `name()`.
"""
import json
import sys
from pathlib import Path

from worker.trainer import metric_names
from worker.trainer.metric_names import MetricFamily

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "frontend" / "static" / "js" / "metric_names.js"

HEADER = """\
// GENERATED from worker/trainer/metric_names.py by `python -m scripts.write_metric_names`: do not edit.
// tests/scripts/test_write_metric_names.py fails while this differs from what the catalogue generates.
// window.MetricNames: the names of the metrics the trainer reports, for the charts' scripts (load
// this first). A family (names holding a reward function's, a judge's, k...) has its `template`, a
// `pattern` matching its names whole (one group per placeholder) and `name({placeholder: value})`.
(function () {
  "use strict";

  function family(template, pattern) {
    return Object.freeze({
      template,
      pattern: new RegExp(pattern),
      name: (members) => template.replace(/\\{(\\w+)\\}/g, (_, key) => String(members[key])),
    });
  }

  window.MetricNames = Object.freeze({
"""
FOOTER = """\
  });
})();
"""


def exported() -> dict[str, str | MetricFamily]:
    """The catalogue's public constants, in its order: names, prefixes and families."""
    return {key: value for key, value in vars(metric_names).items()
            if key.isupper() and isinstance(value, str | MetricFamily)}


def entry(key: str, value: str | MetricFamily) -> str:
    if isinstance(value, MetricFamily):
        return f"    {key}: family({json.dumps(value.template)}, {json.dumps(value.pattern)}),\n"
    return f"    {key}: {json.dumps(value)},\n"


def javascript() -> str:
    return HEADER + "".join(entry(key, value) for key, value in exported().items()) + FOOTER


def main() -> int:
    TARGET.write_text(javascript())
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
