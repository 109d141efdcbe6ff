"""Calling the reward sandbox from tests: short limits, and reward sources written inline."""
from worker.trainer.rewards.sandbox import SandboxLimits

# Short enough to keep the hostile cases quick, long enough for a loaded 2-core machine.
TEST_LIMITS = SandboxLimits(call_timeout_s=3.0, load_timeout_s=20.0, memory_bytes=512 << 20, output_bytes=256 << 10)


def reward_source(body: str, imports: str = "") -> str:
    """A reward function whose body is `body` (indented for you)."""
    indented = "\n".join("    " + line for line in body.strip("\n").splitlines())
    return f"{imports}\ndef reward(prompts, completions, **columns):\n{indented}\n"


def call(pool, source: str, completions=("a", "bb"), **columns):
    completions = list(completions)
    return pool.call(source, ["q"] * len(completions), completions,
                     {name: list(values) for name, values in columns.items()})
