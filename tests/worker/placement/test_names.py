"""The names both sides of a Ray pool read: a run's placement group, a machine."""
import pytest

from worker.placement.names import machine_name, placement_group_name, run_of_placement_group


def test_a_placement_group_name_reads_back_as_its_run_and_attempt():
    assert placement_group_name(7, 3) == "grpo-run-7-a3"
    assert run_of_placement_group(placement_group_name(7, 3)) == (7, 3)


@pytest.mark.parametrize("name", ["", "someone-elses-group", "grpo-run-7", "grpo-run-x-a1", "grpo-run-7-a1-extra"])
def test_groups_not_named_for_a_run_belong_to_no_run(name):
    assert run_of_placement_group(name) is None


def test_a_placement_group_name_needs_a_real_run_and_attempt():
    with pytest.raises(ValueError, match="run id and an attempt"):
        placement_group_name(0, 1)


def test_a_machine_is_named_by_its_label_before_its_hostname():
    node = {"Labels": {"grpo-machine": "node-b"}, "NodeManagerHostname": "host", "NodeManagerAddress": "10.0.0.2"}
    assert machine_name(node) == "node-b"


def test_an_unlabelled_machine_is_named_by_its_hostname():
    assert machine_name({"Labels": {"ray.io/node-id": "ab"}, "NodeManagerHostname": "gpu-07"}) == "gpu-07"
