"""Datasets from the hub and from generators; renaming, changing and deleting them."""
import pytest

from runs.datasets.models import Dataset


def create(client, **body):
    return client.post("/api/datasets/", body, format="json")


def test_a_hub_dataset_is_stored_unvalidated(owner_api):
    response = create(owner_api, name="gsm8k", source="hub", hub_id="openai/gsm8k", prompt_column="question")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["row_count"] is None and body["preview"] == [] and body["split"] == "train"
    assert Dataset.objects.get(pk=body["id"]).is_validated is False


@pytest.mark.parametrize("hub_id", ["", "not a hub id", "../etc/passwd", "a/b/c", "a/..", "a/.hidden", "a..b/c"])
def test_a_malformed_hub_id_is_refused(owner_api, hub_id):
    response = create(owner_api, name="bad", source="hub", hub_id=hub_id)
    assert response.status_code == 400
    assert "hub_id" in response.json()


def test_a_generator_dataset_fills_in_defaults_and_previews(owner_api):
    response = create(owner_api, name="sums", source="generator", generator="arithmetic",
                      generator_params={"count": 50})
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["generator_params"] == {"count": 50, "difficulty": 1, "seed": 0, "examples": 0}
    assert body["row_count"] == 50
    assert body["columns"] == ["prompt", "answer"] and body["prompt_format"] == "text"
    assert 0 < len(body["preview"]) <= 5 and body["preview"][0]["answer"].startswith("####")


def test_a_generator_dataset_with_worked_examples_has_chat_prompts(owner_api):
    response = create(owner_api, name="sums", source="generator", generator="arithmetic",
                      generator_params={"count": 10, "examples": 1})
    body = response.json()
    assert response.status_code == 201 and body["prompt_format"] == "chat"
    assert [turn["role"] for turn in body["preview"][0]["prompt"]] == ["user", "assistant", "user"]


def test_an_unknown_generator_is_refused_on_generator(owner_api):
    response = create(owner_api, name="x", source="generator", generator="sudoku")
    assert response.status_code == 400
    assert "arithmetic" in str(response.json()["generator"])


@pytest.mark.parametrize("params,named", [
    ({"count": 0}, "count"), ({"difficulty": 9}, "difficulty"), ({"colour": "red"}, "colour"),
    ("not an object", ""),
])
def test_bad_generator_params_are_refused_on_generator_params(owner_api, params, named):
    response = create(owner_api, name="x", source="generator", generator="arithmetic", generator_params=params)
    assert response.status_code == 400
    assert named in str(response.json()["generator_params"])


def test_a_generator_dataset_whose_prompt_column_is_missing_is_refused(owner_api):
    response = create(owner_api, name="x", source="generator", generator="arithmetic", prompt_column="question")
    assert response.status_code == 400
    assert "answer" in str(response.json()["prompt_column"])


@pytest.mark.parametrize("source,extra,named", [
    ("hub", {"generator": "arithmetic"}, "generator"),
    ("hub", {"generator_params": {"count": 5}}, "generator_params"),
    ("generator", {"hub_id": "openai/gsm8k"}, "hub_id"),
    ("generator", {"split": "test"}, "split"),
])
def test_a_field_another_source_reads_is_refused_by_name_and_nothing_is_stored(owner_api, source, extra, named):
    own = {"hub": {"hub_id": "openai/gsm8k"}, "generator": {"generator": "arithmetic"}}[source]
    response = create(owner_api, name="x", source=source, **own, **extra)
    assert response.status_code == 400, response.content
    assert f"source is {source}" in str(response.json()[named])
    assert not Dataset.objects.filter(name="x").exists()


def test_empty_fields_of_other_sources_are_let_through(owner_api):
    response = create(owner_api, name="x", source="hub", hub_id="openai/gsm8k", generator="", generator_params={})
    assert response.status_code == 201, response.content


def test_an_unknown_source_is_refused(owner_api):
    response = create(owner_api, name="x", source="ftp")
    assert response.status_code == 400
    assert "source" in response.json()


def test_a_dataset_can_be_renamed(owner_api, dataset):
    response = owner_api.patch(f"/api/datasets/{dataset.pk}/", {"name": "renamed"}, format="json")
    assert response.status_code == 200, response.content
    dataset.refresh_from_db()
    assert dataset.name == "renamed"


@pytest.mark.parametrize("change", [
    {"source": "hub", "hub_id": "openai/gsm8k"},
    {"generator_params": {"count": 99}},
    {"prompt_column": "answer"},
])
def test_changing_a_datasets_source_is_refused(owner_api, dataset, change):
    response = owner_api.patch(f"/api/datasets/{dataset.pk}/", change, format="json")
    assert response.status_code == 400
    errors = response.json()
    assert set(change) & set(errors)
    assert "create a new dataset" in str(errors)
    dataset.refresh_from_db()
    assert dataset.source == "generator" and dataset.generator_params["count"] == 10


def test_a_duplicate_name_for_the_same_owner_is_refused_on_name(owner_api, dataset):
    response = create(owner_api, name=dataset.name, source="hub", hub_id="openai/gsm8k")
    assert response.status_code == 400
    assert dataset.name in str(response.json()["name"])


def test_renaming_onto_another_of_ones_own_names_is_refused(owner_api, dataset):
    second = create(owner_api, name="second", source="hub", hub_id="openai/gsm8k").json()
    response = owner_api.patch(f"/api/datasets/{second['id']}/", {"name": dataset.name}, format="json")
    assert response.status_code == 400 and "name" in response.json()


def test_another_user_may_use_the_same_name(other_api, dataset):
    response = create(other_api, name=dataset.name, source="hub", hub_id="openai/gsm8k")
    assert response.status_code == 201, response.content


def test_deleting_a_dataset_used_by_a_run_is_refused_with_a_reason(owner_api, run):
    response = owner_api.delete(f"/api/datasets/{run.dataset_id}/")
    assert response.status_code == 409
    assert run.name in response.json()["detail"]
    assert Dataset.objects.filter(pk=run.dataset_id).exists()


def test_an_unused_dataset_can_be_deleted(owner_api, dataset):
    assert owner_api.delete(f"/api/datasets/{dataset.pk}/").status_code == 204
    assert not Dataset.objects.filter(pk=dataset.pk).exists()


@pytest.mark.django_db(transaction=True)
def test_a_name_clash_that_slips_past_the_check_is_a_409_not_a_500(owner_api, dataset):
    from unittest import mock

    # Two requests at once both pass the serializer's name check; the database constraint decides.
    with mock.patch("runs.datasets.serializers.unique_name_for_owner", side_effect=lambda s, m, name: name):
        response = create(owner_api, name=dataset.name, source="hub", hub_id="openai/gsm8k")
    assert response.status_code == 409
    assert "try again" in response.json()["detail"]
    assert Dataset.objects.filter(name=dataset.name).count() == 1
