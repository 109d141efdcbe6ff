"""Suggestions: the knob that moves the bottleneck, never one the config refuses, never the
value the run already has."""
from runs.diagnosis.engine import diagnose
from runs.diagnosis.run_config import setting
from tests.support.made_up_runs import CONFIG, series, step_of

CAP_HELD = step_of(12.0, 6.0, async__blocked_by_inflight_cap=0.9, async__blocked_by_staleness=0.0,
                   async__ahead_bound=8)
STALENESS_HELD = step_of(12.0, 6.0, async__blocked_by_inflight_cap=0.0, async__blocked_by_staleness=0.8)
SERVER_SLOW = step_of(12.0, 6.0, async__blocked_by_inflight_cap=0.05, async__blocked_by_staleness=0.05,
                      system__generation_tokens_per_s=100, system__training_tokens_per_s=900)


def proposed(found) -> list[tuple[str, object]]:
    return [(s["knob"], s["proposed"]) for s in found.suggestions]


def test_a_cap_that_held_submission_back_is_doubled_within_the_staleness_bound_or_left_to_auto():
    found = diagnose(series(CAP_HELD), {**CONFIG, "max_inflight_tasks": 3})
    assert proposed(found) == [("max_inflight_tasks", 6), ("max_inflight_tasks", "auto")]
    assert "90% of the time" in found.suggestions[0]["why"] and found.suggestions[0]["current"] == 3


def test_a_doubled_cap_stops_at_the_staleness_bound():
    assert proposed(diagnose(series(CAP_HELD), {**CONFIG, "max_inflight_tasks": 6}))[0] == ("max_inflight_tasks", 8)


def test_a_cap_already_at_the_staleness_bound_raises_max_staleness_instead():
    found = diagnose(series(CAP_HELD), {**CONFIG, "max_inflight_tasks": 8})
    assert proposed(found) == [("max_staleness", 5)]
    # The share quoted is the cap's (0.9), said to be the cap's: the bound's own share was 0.
    assert "the in-flight cap reaches it and held submission back 90% of the time" in found.suggestions[0]["why"]


def test_the_staleness_bound_holding_submission_back_raises_max_staleness_by_one_and_names_the_cost():
    found = diagnose(series(STALENESS_HELD), {**CONFIG, "max_staleness": 2})
    assert proposed(found) == [("max_staleness", 3)]
    assert "one weight version older" in found.suggestions[0]["why"]


def test_a_slow_server_on_a_cpu_taking_turns_gets_cores_of_its_own():
    found = diagnose(series(SERVER_SLOW), {**CONFIG, "cpu_sharing": "take_turns"})
    assert proposed(found) == [("cpu_sharing", "split_cores")]
    assert "100 tokens/s generated against 900 tokens/s trained" in found.suggestions[0]["why"]


def test_a_slow_server_on_gpus_gets_one_more_vllm_engine():
    found = diagnose(series(SERVER_SLOW), CONFIG, device="gpu")
    assert proposed(found) == [("vllm_data_parallel_size", 2)]


def test_a_slow_server_on_an_unknown_device_names_both_remedies_in_the_sentence_and_suggests_no_knob():
    found = diagnose(series(SERVER_SLOW), {**CONFIG, "cpu_sharing": "auto", "worker_pool": "default"})
    assert found.suggestions == [] and "vllm_data_parallel_size" in found.sentence and "cpu_sharing" in found.sentence


def test_training_bound_keeps_the_batch_whole_with_larger_micro_batches_and_drops_checkpointing():
    found = diagnose(series(step_of(0.2, 18.0)), {**CONFIG, "gradient_checkpointing": True})
    assert found.suggestions[0] | {"why": ""} == {"knob": "gradient_checkpointing", "current": True,
                                                  "proposed": False, "why": "", "also_set": {}}
    batch = found.suggestions[1]
    assert (batch["current"], batch["proposed"], batch["also_set"]) == (2, 4, {"gradient_accumulation_steps": 4})


def test_a_suggestion_the_config_refuses_is_dropped():
    # 4 trainer processes must divide gradient_accumulation_steps: halving 4 to 2 is refused.
    config = {**CONFIG, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 4, "trainer_processes": 4}
    assert proposed(diagnose(series(step_of(0.2, 18.0)), config)) == []


def test_a_proposal_equal_to_the_current_value_is_dropped():
    found = diagnose(series(step_of(1.0, 5.0, evaluation=9.0)), {**CONFIG, "eval_steps": 10, "eval_examples": 1})
    assert proposed(found) == [("eval_steps", 20)]


def test_a_long_weight_sync_syncs_less_often():
    assert proposed(diagnose(series(step_of(1.0, 5.0, sync=8.0)), CONFIG)) == [("weight_sync_steps", 2)]


def test_a_slow_reward_suggests_more_in_flight_only_where_the_cap_held():
    slow = step_of(10.0, 5.0, rollout__group_scoring_s=8.0, rollout__group_generation_s=1.0)
    assert diagnose(series(slow), CONFIG).suggestions == []
    held = {**slow, "async/blocked_by_inflight_cap": 0.8, "async/ahead_bound": 64.0}
    assert proposed(diagnose(series(held), CONFIG)) == [("max_inflight_tasks", 32)]


def test_every_suggestion_is_a_config_the_schema_takes():
    from worker.trainer.config import TrainingConfig

    for values, config in ((CAP_HELD, {**CONFIG, "max_inflight_tasks": 3}), (step_of(0.2, 18.0), CONFIG)):
        for s in diagnose(series(values), config).suggestions:
            TrainingConfig.model_validate({**config, **s["also_set"], s["knob"]: s["proposed"]})


def test_max_staleness_from_0_skips_to_the_least_value_that_lets_more_groups_ahead():
    # 2 groups a step, a sync every step: the bound is max(2 × 1 × s, 2), 2 at s=0 and at s=1.
    found = diagnose(series(STALENESS_HELD), {**CONFIG, "max_staleness": 0})
    assert proposed(found) == [("max_staleness", 2)]
    assert "2 lets 2 more groups be generated ahead" in found.suggestions[0]["why"]
    assert "up to 2 weight versions older" in found.suggestions[0]["why"]


def test_max_staleness_more_groups_is_the_bounds_growth_not_a_step_of_groups():
    # Syncing every 2 steps: s=0 → 2 groups ahead (the floor), s=1 → 4: 2 more, not 4.
    found = diagnose(series(STALENESS_HELD), {**CONFIG, "max_staleness": 0, "weight_sync_steps": 2})
    assert proposed(found) == [("max_staleness", 1)]
    assert "1 lets 2 more groups be generated ahead" in found.suggestions[0]["why"]


def test_a_max_staleness_that_leaves_the_bound_as_it_is_is_refused_when_accepting(monkeypatch):
    from runs.diagnosis import suggestions

    monkeypatch.setattr(suggestions, "next_staleness", lambda config: setting(config, "max_staleness") + 1)
    assert proposed(diagnose(series(STALENESS_HELD), {**CONFIG, "max_staleness": 0})) == []
    assert proposed(diagnose(series(STALENESS_HELD), {**CONFIG, "max_staleness": 2})) == [("max_staleness", 3)]


def test_a_doubled_cap_stops_at_queue_maxsize():
    found = diagnose(series(CAP_HELD), {**CONFIG, "max_inflight_tasks": 3, "queue_maxsize": 5})
    assert proposed(found) == [("max_inflight_tasks", 5), ("max_inflight_tasks", "auto")]
    assert "queue_maxsize 5" in found.suggestions[0]["why"]


def test_a_cap_at_queue_maxsize_below_the_staleness_bound_gets_no_cap_or_staleness_change():
    # Neither a larger cap nor a larger staleness bound lets more than 5 scored groups be queued.
    assert proposed(diagnose(series(CAP_HELD), {**CONFIG, "max_inflight_tasks": 5, "queue_maxsize": 5})) == []


def test_cores_for_vllm_name_the_cores_the_machine_needs():
    found = diagnose(series(SERVER_SLOW), {**CONFIG, "cpu_sharing": "take_turns"})
    assert "on a machine with at least 2 cores" in found.suggestions[0]["why"]
    found = diagnose(series(SERVER_SLOW), {**CONFIG, "cpu_sharing": "split_cores", "vllm_cpu_cores": 3})
    assert proposed(found) == [("vllm_cpu_cores", 4)]
    assert "on a machine with at least 5 cores" in found.suggestions[0]["why"]
