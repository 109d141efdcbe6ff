"""Runs with code rewards: the loader builds them on the sandbox, the scorer isolates their failures."""
import pytest

from tests.support.sandbox import TEST_LIMITS
from worker.trainer.rewards.loader import RewardSetupError, load_rewards, needs_sandbox
from worker.trainer.rewards.sandbox import SandboxPool
from worker.trainer.rollout.groups import Completion, Group
from worker.trainer.rollout.scoring import Scorer
from worker.trainer.spec import RewardSpec

MENTIONS_ANSWER = '''
def reward(prompts, completions, answer, completion_lengths=None, **columns):
    return [1.0 if a.split("####")[-1].strip() in c else 0.0 for c, a in zip(completions, answer)]
'''
FLAKY = '''
def reward(prompts, completions, **columns):
    if any("boom" in c for c in completions):
        raise RuntimeError("cannot score " + completions[0])
    return [0.5] * len(completions)
'''


@pytest.fixture
def pool():
    with SandboxPool(size=1, limits=TEST_LIMITS) as shared:
        yield shared


def spec(name, **fields):
    return RewardSpec(name=name, **fields)


def group(*texts):
    return Group(prompt_index=0, prompt_text="2+2?", prompt_ids=[1], columns={"answer": "#### 4"},
                 completions=[Completion([1] * len(t), [-1.0] * len(t), t, "stop") for t in texts], model_version=0)


def test_only_code_rewards_need_the_sandbox():
    assert not needs_sandbox([spec("len", kind="builtin", builtin="length")])
    assert needs_sandbox([spec("len", kind="builtin", builtin="length"), spec("mine", kind="code", source=FLAKY)])


def test_a_code_reward_scores_through_the_sandbox_beside_a_builtin(pool):
    functions = load_rewards([spec("mine", kind="code", source=MENTIONS_ANSWER, weight=2.0),
                              spec("acc", kind="builtin", builtin="accuracy")], pool)
    g = group("it is 4", "it is 5")
    Scorer(functions, on_error=pytest.fail).score(g)
    assert g.rewards == {"mine": [1.0, 0.0], "acc": [1.0, 0.0]}
    assert g.totals == [3.0, 0.0]
    assert pool.processes_started == 1


def test_a_failing_code_reward_gives_none_and_a_reason_and_the_next_batch_scores(pool):
    errors = []
    scorer = Scorer(load_rewards([spec("flaky", kind="code", source=FLAKY)], pool),
                    on_error=lambda name, message: errors.append((name, message)))
    broken, fine = group("boom", "ok"), group("ok", "ok")
    scorer.score(broken)
    scorer.score(fine)
    assert broken.rewards == {"flaky": [None, None]} and broken.totals == [0, 0]
    assert fine.rewards == {"flaky": [0.5, 0.5]}
    [(name, message)] = errors
    assert name == "flaky"
    assert "RuntimeError: cannot score boom" in message and 'File "reward.py", line 4' in message


def test_a_hanging_code_reward_times_out_for_its_batch_only(pool):
    hanging = "def reward(prompts, completions, **columns):\n    while 'slow' in completions[0]:\n        pass\n" \
              "    return [1.0] * len(completions)\n"
    errors = []
    scorer = Scorer(load_rewards([spec("hang", kind="code", source=hanging)], pool),
                    on_error=lambda name, message: errors.append(message))
    slow, quick = group("slow"), group("quick")
    scorer.score(slow)
    scorer.score(quick)
    assert slow.rewards["hang"] == [None] and quick.rewards["hang"] == [1.0]
    assert "longer than" in errors[0]


def test_code_that_does_not_check_is_refused_before_the_run_starts(pool):
    with pytest.raises(RewardSetupError, match="'bad'.*syntax error"):
        load_rewards([spec("bad", kind="code", source="def reward(:\n")], pool)


def test_code_without_a_sandbox_is_refused():
    with pytest.raises(RewardSetupError, match="only in a reward sandbox"):
        load_rewards([spec("mine", kind="code", source=FLAKY)])
