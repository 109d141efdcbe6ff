"""The demo definitions are what the API and the trainer accept: a definition that no longer
validates would break the home page's button and the learning benchmark together."""
import ast
from pathlib import Path

import pytest

from runs.demos.definitions import DEMOS
from worker.trainer.config import PRESETS, TrainingConfig
from worker.trainer.data.generators import generate
from worker.trainer.for_control_plane.environments import BUILTIN_ENVIRONMENTS
from worker.trainer.for_control_plane.rewards import BUILTINS


def test_the_module_imports_no_django():
    tree = ast.parse(Path("runs/demos/definitions.py").read_text())
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    imported += [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert not [name for name in imported if name.startswith(("django", "runs.models", "rest_framework"))]


def test_both_demos_are_offered_by_key():
    assert set(DEMOS) == {"arithmetic", "tool-use"}
    assert all(demo.key == key and demo.title and demo.watch for key, demo in DEMOS.items())


@pytest.mark.parametrize("key, steps", [("arithmetic", PRESETS["cpu-demo"]["max_steps"]), ("tool-use", 120)])
def test_each_demo_config_validates_as_a_training_config_of_its_length(key, steps):
    # The tool-use demo trains twice the preset's steps: its right answers come by chance at first.
    values = DEMOS[key].config_values(PRESETS)
    assert TrainingConfig(**values).model_dump()["max_steps"] == steps


@pytest.mark.parametrize("key", ["arithmetic", "tool-use"])
def test_each_demo_dataset_generates_and_its_rewards_validate(key):
    demo = DEMOS[key]
    rows = generate(demo.dataset["generator"], {**demo.dataset["generator_params"], "count": 3})
    assert len(rows) == 3 and demo.dataset["prompt_column"] in rows[0]
    names = [fields["name"] for fields, _ in demo.rewards]
    assert set(demo.eval_rewards) <= set(names)
    for fields, _ in demo.rewards:
        BUILTINS[fields["builtin"]].model_validate(fields["params"])


def test_the_tool_use_demo_runs_on_the_built_in_calculator():
    environment = DEMOS["tool-use"].environment
    assert environment is not None and environment["kind"] == "builtin"
    BUILTIN_ENVIRONMENTS[environment["builtin"]].model_validate(environment["params"])
    assert DEMOS["arithmetic"].environment is None


def test_the_arithmetic_demo_holds_out_enough_problems_for_its_target():
    """192 problems: one standard error of a change between two evaluations is about 0.05, so a
    gain of 0.15 is beyond its 95% interval; the problems left to train on far outnumber those a
    run meets (two a step)."""
    values = DEMOS["arithmetic"].config_values(PRESETS)
    assert values["eval_examples"] >= 128
    rows = generate("arithmetic", DEMOS["arithmetic"].dataset["generator_params"])
    problems = {row["prompt"][-1]["content"] for row in rows}
    assert len(problems) * values["eval_holdout_fraction"] >= values["eval_examples"]
    groups_a_step = values["per_device_train_batch_size"] * values["gradient_accumulation_steps"] // \
        values["num_generations"]
    trained_on = values["max_steps"] * groups_a_step
    assert len(problems) * (1 - values["eval_holdout_fraction"]) >= 4 * trained_on


def test_names_differ_from_the_earlier_demo_objects_whose_contents_changed():
    """A user's library finds demo objects by name: changed contents need a new name."""
    earlier = {"Demo: arithmetic, one worked example", "Demo: CPU, evaluated", "Demo: arithmetic",
               "Demo: arithmetic up to 30, one worked example", "Demo: CPU arithmetic, 192 held-out problems"}
    names = {demo.dataset["name"] for demo in DEMOS.values()} | {demo.config["name"] for demo in DEMOS.values()}
    assert not names & earlier
