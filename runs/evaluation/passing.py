"""When an example passes an evaluation, and what its passes and fails across evaluations say.

An example is answered `samples` times per evaluation (config.eval_samples); `passed` of the
answers reached config.eval_pass_threshold. One yes or no per evaluation is what "flipped" and
"learned" need: the example passes when at least half its answers pass (with one answer, when
that answer passes).
"""
ALWAYS_PASSED = "always_passed"
NEVER_PASSED = "never_passed"
LEARNED = "learned"
FORGOTTEN = "forgotten"
UNSTABLE = "unstable"
CLASSES = {
    ALWAYS_PASSED: "passed at every evaluation",
    NEVER_PASSED: "failed at every evaluation",
    LEARNED: "failed at the first evaluation, passes at the last",
    FORGOTTEN: "passed at the first evaluation, fails at the last",
    UNSTABLE: "the same at the first and the last evaluation, different in between",
}


def passes(passed: int, samples: int) -> bool:
    return samples > 0 and 2 * passed >= samples


def classify(states: list[bool]) -> str:
    """The class of an example from its pass states, oldest evaluation first (at least one)."""
    if all(states):
        return ALWAYS_PASSED
    if not any(states):
        return NEVER_PASSED
    if states[-1] and not states[0]:
        return LEARNED
    if states[0] and not states[-1]:
        return FORGOTTEN
    return UNSTABLE


def flip_count(states: list[bool]) -> int:
    return sum(before != after for before, after in zip(states, states[1:]))


def class_counts(classes) -> dict[str, int]:
    counts = dict.fromkeys(CLASSES, 0)
    for name in classes:
        counts[name] += 1
    return counts
