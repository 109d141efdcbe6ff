"""Each bottleneck named from the time split and the rollout metrics, with its sentence."""
from runs.diagnosis.engine import diagnose
from tests.support.made_up_runs import CONFIG, series, step_of


def test_waiting_for_rollouts_while_the_cap_held_submission_back_is_generation_with_the_cap_in_the_sentence():
    found = diagnose(series(step_of(12.4, 6.0, 1.0, other=0.6, async__blocked_by_inflight_cap=0.9,
                                    async__blocked_by_staleness=0.05, async__max_inflight=4)),
                     {**CONFIG, "max_inflight_tasks": 4})
    assert found.bottleneck == "generation"
    assert found.sentence == ("Generation is the bottleneck: the trainer waited 62% of each step (12.4 s of 20.0 s) "
                              "for rollouts while the in-flight cap of 4 held submission back 90% of the time.")


def test_a_reward_slower_than_generation_is_scoring_with_its_seconds_per_group():
    found = diagnose(series(step_of(10.0, 5.0, rollout__group_scoring_s=8.2, rollout__group_generation_s=1.1)),
                     CONFIG)
    assert found.bottleneck == "scoring"
    assert "scoring a group took 8.2 s against 1.1 s to generate it" in found.sentence


def test_generation_slower_than_scoring_stays_generation():
    found = diagnose(series(step_of(10.0, 5.0, rollout__group_scoring_s=0.2, rollout__group_generation_s=6.0)),
                     CONFIG)
    assert found.bottleneck == "generation"


def test_training_most_of_the_step_with_little_waiting_is_training():
    found = diagnose(series(step_of(0.5, 17.0, 1.0)), CONFIG)
    assert found.bottleneck == "training"
    assert found.sentence.startswith("Training is the bottleneck: it took 89% of each step (17.0 s of 19.0 s)")


def test_a_long_weight_sync_is_named():
    found = diagnose(series(step_of(1.0, 5.0, sync=8.0)), CONFIG)
    assert (found.bottleneck, found.sentence.split(":")[0]) == ("weight_sync", "Weight sync is the bottleneck")


def test_long_waits_for_evaluation_are_named():
    found = diagnose(series(step_of(1.0, 5.0, evaluation=9.0)), {**CONFIG, "eval_steps": 2})
    assert found.bottleneck == "evaluation"


def test_the_larger_of_two_big_parts_is_the_bottleneck():
    found = diagnose(series(step_of(6.0, 2.0, sync=9.0)), CONFIG)
    assert found.bottleneck == "weight_sync"


def test_nothing_above_its_share_is_balanced_and_the_sentence_lists_the_parts():
    found = diagnose(series(step_of(4.0, 10.0, 2.0, other=4.0)), CONFIG)
    assert found.bottleneck == "balanced"
    assert found.sentence.startswith("Nothing dominates: of each 20.0 s step, waiting for rollouts 20%, training 50%")


def test_a_server_paused_for_training_much_of_the_time_says_so():
    found = diagnose(series(step_of(12.0, 6.0, async__blocked_by_inflight_cap=0.0, async__blocked_by_staleness=0.0,
                                    async__paused_share=0.6)), {**CONFIG, "cpu_sharing": "take_turns"})
    assert "it was paused for training 60% of the time" in found.sentence
    assert found.evidence["paused_share"] == 0.6
