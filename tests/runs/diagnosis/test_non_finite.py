"""A NaN or an infinity a step logged is read as not logged: the window's means and the JSON
stay numbers (a NaN would make the endpoint fail to render its answer)."""
import json
import math

from runs.diagnosis.engine import diagnose
from tests.support.made_up_runs import CONFIG, series, step_of


def test_non_finite_values_are_left_out_of_the_window():
    values = series(step_of(12.0, 6.0, system__generation_tokens_per_s=100.0))
    values["system/generation_tokens_per_s"][5] = (6, math.nan)
    values["async/wait_for_rollouts_s"][7] = (8, math.inf)
    values["system/step_time_s"][9] = (10, math.nan)
    found = diagnose(values, CONFIG)
    assert found.throughput["generation_tokens_per_s"] == 100.0
    assert found.bottleneck == "generation"
    assert found.steps_measured == 13  # steps 2-15, less step 10, whose step time was a NaN
    json.dumps(found.as_dict(), allow_nan=False)  # raises on a NaN or an infinity anywhere
