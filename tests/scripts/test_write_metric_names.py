"""The browser's copy of the metric names is the one the catalogue generates now: a renamed or
added metric regenerates it (`python -m scripts.write_metric_names`), nobody edits it by hand."""
import re

from scripts.write_metric_names import TARGET, javascript
from worker.trainer import metric_names


def test_the_generated_script_is_what_the_catalogue_generates_now():
    assert TARGET.read_text() == javascript(), (
        f"{TARGET.name} differs from worker/trainer/metric_names.py: run `python -m scripts.write_metric_names`")


def test_it_says_it_is_generated_and_how():
    assert javascript().startswith("// GENERATED from worker/trainer/metric_names.py by "
                                   "`python -m scripts.write_metric_names`")


def test_every_metric_family_and_prefix_of_the_catalogue_is_in_it():
    text = javascript()
    assert all(f'"{name}"' in text for name in metric_names.CATALOGUE)
    assert re.search(r'ROLLOUT_REWARD_FN_MEAN: family\("rollout/reward/\{reward\}_mean", '
                     r'"\^rollout/reward/\(\.\+\)_mean\$"\)', text)
    assert 'EVAL_PREFIX: "eval/"' in text
