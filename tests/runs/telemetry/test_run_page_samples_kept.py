"""The run page's completions panel says what the run keeps of each step's completions."""
import re

import pytest

from runs.telemetry.sample_keeping import ordinal


def kept_line(client, run) -> str:
    html = client.get(f"/runs/{run.pk}/").content.decode()
    return re.search(r'<p id="samples-kept"[^>]*>(.*?)</p>', html, re.S).group(1).replace("&#x27;", "'")


@pytest.mark.parametrize("knobs,said", [
    ({}, "Keeps every completion of every step."),
    ({"samples_every_steps": 10}, "Keeps every completion of every 10th step; the metrics count every step."),
    ({"samples_groups_per_step": 2, "samples_every_steps": 10, "num_generations": 4, "per_device_train_batch_size": 32},
     "Keeps 2 groups of every 10th step (8 a step, picked at random with the run's seed); "
     "the metrics count every group."),
    ({"samples_groups_per_step": 2, "num_generations": 4, "per_device_train_batch_size": 8},  # 2 of 2
     "Keeps every completion of every step."),
    ({"log_completions": False}, "Keeps no completions (log_completions is off); the metrics count every one."),
    # A run created before the knobs: the trainer reads num_completions_to_log as it did.
    ({"num_completions_to_log": 1, "logging_steps": 3, "num_generations": 4, "per_device_train_batch_size": 8},
     "Keeps 1 group of every 3rd step (2 a step, picked at random with the run's seed); "
     "the metrics count every group."),
])
def test_the_completions_panel_says_what_is_kept(logged_in, run, knobs, said):
    legacy = "num_completions_to_log" in knobs
    config = {**{k: v for k, v in run.config.items() if not (legacy and k.startswith("samples_"))}, **knobs}
    run.config = config
    run.save(update_fields=["config"])
    assert kept_line(logged_in, run) == said


@pytest.mark.parametrize("number,word", [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"),
                                         (12, "12th"), (13, "13th"), (21, "21st"), (102, "102nd"), (111, "111th")])
def test_ordinals(number, word):
    assert ordinal(number) == word
