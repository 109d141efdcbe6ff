"""The demos a new user starts from the home page, as data: the dataset, rewards, environment and
config of each, in the fields the API takes. The home page (runs/demos/library.py) makes them in a
user's library and bench/learning.py trains on them: one definition, so that what the benchmark
shows learning is what the button starts. No Django here: the benchmark imports it without one.

A library object is found by name and reused (runs/demos/library.py), so a name changes whenever
its contents do: a user's earlier "Demo: ..." objects stay what their runs trained on.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class DemoDefinition:
    key: str  # "arithmetic" | "tool-use"
    title: str  # what the home page's button says
    watch: str  # one sentence: what to watch on the run page
    dataset: dict  # Dataset fields as the API takes them (a generator dataset)
    rewards: list[tuple[dict, float]]  # (reward fields as the API takes them, weight)
    eval_rewards: list[str]  # names, among `rewards`, that the held-out evaluation scores
    environment: dict | None  # environment fields as the API takes them (dataset and rubric: the above), or None
    config: dict  # {"name", "preset", "overrides": {knob: value}, "description"}

    def config_values(self, presets: dict[str, dict]) -> dict:
        """The config's knobs: its preset's, then its overrides."""
        return {**presets[self.config["preset"]], **self.config["overrides"]}


ACCURACY = ({"name": "Demo: accuracy", "kind": "builtin", "builtin": "accuracy", "params": {"answer_column": "answer"},
             "description": "1 when the number after #### equals the answer."}, 1.0)
FORMAT = ({"name": "Demo: format", "kind": "builtin", "builtin": "format", "params": {},
           "description": "1 when the completion ends with '#### <number>'."}, 1.0)

# Sums of two numbers up to 30 (900 distinct problems), one worked example before each: held out by
# problem, 192 of the 198 problems the run never trains on evaluated, so a change of 0.15 in held-out
# accuracy is beyond the noise of one evaluation (bench/README.md). Sums alone: with differences,
# SmolLM2-135M answered no negative one in 60 steps and few others, and every gain was in the sums
# (bench/LOG.md, 2026-11-27).
ARITHMETIC = DemoDefinition(
    key="arithmetic",
    title="Arithmetic (one-shot)",
    watch="Held-out accuracy (the evaluation chart, with its interval) rising from its first point "
          "while the entropy stays well above 0; the format reward, charted but paid nothing, rises only "
          "as far as correct answers carry it.",
    dataset={
        # A new name, not new parameters under an old one: a library's "Demo: arithmetic up to 30, one
        # worked example" (sums and differences) stays what its runs were trained and would be resumed on.
        "name": "Demo: sums up to 30, one worked example", "source": "generator", "generator": "arithmetic",
        "prompt_column": "prompt",
        # One worked example before each problem: without it SmolLM2-135M ends 2% of its answers the
        # way the format reward asks, and a third of the runs never found the format (bench/README.md).
        "generator_params": {"count": 5000, "difficulty": 1, "largest": 30, "seed": 0, "examples": 1,
                             "operators": "+"},
    },
    # The format is charted at weight 0, not paid: accuracy already needs it, and paid on its own it
    # was learnt at the sums' expense (held out 0.34 -> 0.21 by step 10) and the entropy fell under
    # 0.1 by step 19; unpaid, held out rose at every evaluation but one and the entropy stayed above
    # 0.17 (bench/LOG.md, 2026-11-26).
    rewards=[ACCURACY, (FORMAT[0], 0.0)],
    # Judged on accuracy alone.
    eval_rewards=["Demo: accuracy"],
    environment=None,
    config={"name": "Demo: CPU sums, 192 held-out problems", "preset": "cpu-demo",
            # A KL to the starting model (beta) at half the preset's rate: at 1e-5 without it, the
            # format paid, the format was learnt at the sums' expense and the entropy collapsed by
            # step 17 (held out 0.34 -> 0.31; bench/LOG.md).
            "overrides": {"eval_holdout_fraction": 0.22, "eval_examples": 192, "beta": 0.04,
                          "learning_rate": 5e-6},
            "description": "The cpu-demo preset held near the starting model (beta 0.04, learning rate 5e-6), "
                           "judged on 192 problems held out of training: SmolLM2-135M, about 20 s a step on "
                           "two cores."},
)

# Arithmetic at difficulty 3 (four numbers up to 1,000), where a calculator helps: the untrained
# model answers almost none; it learns to call calculate() and answer with its result.
TOOL_USE = DemoDefinition(
    key="tool-use",
    title="Tool use (the calculator)",
    watch="Held-out accuracy climbing from near 0 as the model learns to call the calculator: "
          "tool calls an episode rise towards 1 and the tool error rate falls.",
    dataset={"name": "Demo: calculator problems", "source": "generator", "generator": "arithmetic",
             "prompt_column": "prompt", "generator_params": {"count": 5000, "difficulty": 3, "seed": 0}},
    rewards=[ACCURACY],
    eval_rewards=["Demo: accuracy"],
    environment={"name": "Demo: calculator", "kind": "builtin", "builtin": "calculator", "params": {},
                 "description": "The model may call calculate(expression) and gets the result back, then answers."},
    config={"name": "Demo: CPU calculator episodes, 120 steps", "preset": "cpu-demo",
            # bench.environments' calculator run, which learned (bench/README.md, environments). 120
            # steps, not the preset's 60: the reward is the answer alone, and right answers come by
            # chance until the calls take hold; held out went 0.00 -> 0.14 by step 60, then 0.58 at
            # 75 and 1.00 at 90 (bench/LOG.md, 2026-11-27).
            "overrides": {"max_turns": 3, "max_tool_calls": 2, "max_completion_length": 96,
                          "max_episode_tokens": 192, "max_prompt_length": 512, "eval_steps": 15,
                          "max_steps": 120},
            "description": "The cpu-demo preset on calculator episodes of up to 3 turns and 2 tool calls, "
                           "for 120 steps."},
)

DEMOS: dict[str, DemoDefinition] = {demo.key: demo for demo in (ARITHMETIC, TOOL_USE)}
