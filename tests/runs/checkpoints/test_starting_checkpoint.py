"""init_checkpoint: a checkpoint the user can see, of a run with the same model and lora setting;
the launch spec carries where the worker fetches it (not when the run resumes its own); a start
after it became invisible is refused with a reason."""
from unittest import mock

import pytest
from django.utils import timezone

from runs.training_runs.lifecycle import start_run
from runs.training_runs.launch import build_launch_spec
from runs.checkpoints.models.checkpoint import Checkpoint
from runs.training_runs.models import IllegalTransition, Run


def checkpoint_of(run, step=10) -> Checkpoint:
    return Checkpoint.objects.create(run=run, step=step, path=f"/worker/out/checkpoints/step-{step:07d}",
                                     created_at=timezone.now())


def payload(dataset, reward, **config) -> dict:
    return {"name": "from a checkpoint", "dataset": dataset.pk, "rewards": [{"reward_function": reward.pk}],
            "config": config}


@pytest.mark.django_db
class TestCreation:
    def test_ones_own_checkpoint_is_accepted_and_shown_with_the_config(self, owner_api, run, dataset, reward):
        checkpoint = checkpoint_of(run)
        response = owner_api.post("/api/runs/", payload(dataset, reward, init_checkpoint=checkpoint.pk), format="json")
        assert response.status_code == 201, response.content
        assert response.json()["config"]["init_checkpoint"] == checkpoint.pk

    def test_staff_may_start_from_anyones_checkpoint(self, staff_api, staff_user, run, library_for):
        theirs = library_for(staff_user, "staff")
        checkpoint = checkpoint_of(run)
        response = staff_api.post("/api/runs/", payload(theirs["dataset"], theirs["reward"],
                                                        init_checkpoint=checkpoint.pk), format="json")
        assert response.status_code == 201, response.content

    def test_a_checkpoint_of_another_model_names_the_model_to_set(self, owner_api, run, dataset, reward):
        checkpoint = checkpoint_of(run)
        response = owner_api.post("/api/runs/", payload(dataset, reward, init_checkpoint=checkpoint.pk,
                                                        model="Qwen/Qwen3-0.6B"), format="json")
        assert response.status_code == 400
        assert response.json()["config"]["init_checkpoint"] == [
            f"checkpoint {checkpoint.pk} was trained from model {run.config['model']!r}, not 'Qwen/Qwen3-0.6B': "
            f"set model to {run.config['model']!r}"]

    def test_a_lora_checkpoint_for_a_whole_model_run_says_to_set_lora(self, owner_api, run, dataset, reward):
        run.config["lora"] = True
        run.save()
        checkpoint = checkpoint_of(run)
        response = owner_api.post("/api/runs/", payload(dataset, reward, init_checkpoint=checkpoint.pk), format="json")
        assert response.status_code == 400
        assert response.json()["config"]["init_checkpoint"] == [
            f"checkpoint {checkpoint.pk} holds a LoRA adapter: set lora to true"]

    def test_a_template_naming_another_users_checkpoint_is_refused(self, other_api, run):
        checkpoint = checkpoint_of(run)
        response = other_api.post("/api/configs/", {"name": "theirs", "values": {"init_checkpoint": checkpoint.pk}},
                                  format="json")
        assert response.status_code == 400
        assert response.json()["values"] == {"init_checkpoint": [f"no checkpoint {checkpoint.pk} that you can see"]}


@pytest.mark.django_db
class TestLaunchSpec:
    def test_it_says_where_the_worker_fetches_the_checkpoint_with_this_runs_token(self, run, owner, library_for):
        checkpoint = checkpoint_of(run)
        starting = library_for(owner, "next")["run"]
        starting.config["init_checkpoint"] = checkpoint.pk
        starting.enqueue()
        spec = build_launch_spec(starting, "token")
        assert spec["init_from"] == checkpoint.path
        assert spec["init_url"].endswith(f"/api/runs/{run.pk}/checkpoints/{checkpoint.pk}/download/"
                                         f"?for_run={starting.pk}")

    def test_a_resume_starts_from_the_runs_own_checkpoint_alone(self, run, owner, library_for):
        starting = library_for(owner, "next")["run"]
        starting.config["init_checkpoint"] = checkpoint_of(run).pk
        starting.enqueue()
        spec = build_launch_spec(starting, "token", resume_from=checkpoint_of(starting, step=4))
        assert spec["init_from"] is None and spec["init_url"] is None and spec["resume_from"]

    def test_a_start_after_the_checkpoint_is_gone_is_refused_saying_why(self, run, owner, library_for):
        checkpoint = checkpoint_of(run)
        starting = library_for(owner, "next")["run"]
        starting.config["init_checkpoint"] = checkpoint.pk
        starting.save()
        run.delete()
        with mock.patch("runs.training_runs.queueing.enqueue_execute_run"), pytest.raises(IllegalTransition) as refused:
            start_run(starting)
        assert str(refused.value) == (f"run {starting.pk} cannot start: no checkpoint {checkpoint.pk} that you can "
                                      "see (deleted since?); clone it and choose another init_checkpoint")
        assert Run.objects.get(pk=starting.pk).status == "created"

    def test_a_stored_model_path_cannot_start(self, run):
        run.config["model"] = "/data/runs/1/checkpoints/step-0000010"
        run.save()
        with (mock.patch("runs.training_runs.queueing.enqueue_execute_run"),
              pytest.raises(IllegalTransition, match="MODEL_DIRS")):
            start_run(run)
        assert Run.objects.get(pk=run.pk).status == "created"
