from typing import cast

from django.db import transaction
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied

from runs.accounts.authoring import run_refusal
from runs.alarms.serializers import AlarmSummarySerializer
from runs.alarms.summary import alarm_summary
from runs.configs.models import TrainingConfig
from runs.configs.serializers import KnobsField, complete_config, request_user
from runs.datasets.models import Dataset
from runs.environments.models.environment import Environment
from runs.evaluation.checks import evaluation_problems, training_problems
from runs.fleet.cluster_check import cluster_problems
from runs.fleet.gpu_check import gpu_problems
from runs.rewards.names import shared_name_problem
from runs.rewards.serializers import RunRewardSerializer
from runs.training_runs.models import Run, RunAction, RunEvalReward, RunReward
from runs.web.fields import StrictRequestSerializer, StrictTextModelSerializer, VisiblePrimaryKeyField
from worker.trainer.for_control_plane.environments import verifiers_problem


class RunEvalRewardSerializer(RunRewardSerializer):
    class Meta(RunRewardSerializer.Meta):
        model = RunEvalReward


class RunSerializer(StrictTextModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    dataset = VisiblePrimaryKeyField(
        queryset=Dataset.objects.all(), required=False, allow_null=True,
        help_text="What to train on; may be left out (or null) when `environment` is given: its dataset (a "
                  "verifiers environment's own rows).")
    environment = VisiblePrimaryKeyField(
        queryset=Environment.objects.all(), required=False, allow_null=True,
        help_text="Multi-turn rollouts in this environment. `dataset` and `rewards` default to its dataset "
                  "and rubric; given ones are used instead.")
    config_template = VisiblePrimaryKeyField(queryset=TrainingConfig.objects.all(), required=False, allow_null=True)
    rewards = RunRewardSerializer(source="run_rewards", many=True, required=False,
                                  help_text="At least one, unless `environment` is a verifiers environment (its own "
                                            "rubric scores the episodes); left out (or empty) when `environment` is "
                                            "given: its rubric.")
    eval_dataset = VisiblePrimaryKeyField(
        queryset=Dataset.objects.all(), required=False, allow_null=True,
        help_text="What evaluations run on; null = config.eval_holdout_fraction of the dataset.")
    eval_rewards = RunEvalRewardSerializer(
        source="run_eval_rewards", many=True, required=False,
        help_text="What judges evaluations; empty = the training rewards.")
    config = KnobsField(required=False, help_text="Knobs on top of the template's (or the defaults).")
    max_steps = serializers.IntegerField(read_only=True)
    allowed_actions = serializers.ListField(
        child=serializers.ChoiceField(choices=RunAction.choices), read_only=True,
        help_text="What the run's state allows now (Run.allowed_actions); resume also needs a checkpoint.")
    alarms = serializers.SerializerMethodField(
        help_text="The alarms the run raised about its own signals: the newest of each kind, newest first "
                  "(all of them: /api/runs/{id}/alarms/).")

    class Meta:
        model = Run
        fields = [
            "id", "name", "owner", "dataset", "environment", "rewards", "eval_dataset", "eval_rewards",
            "config_template", "config", "status",
            "cancel_requested", "attempt", "current_step", "max_steps", "last_heartbeat_at", "error_message",
            "created_at", "queued_at", "started_at", "finished_at", "allowed_actions", "alarms",
        ]
        read_only_fields = ["status", "cancel_requested", "attempt", "current_step", "last_heartbeat_at",
                            "error_message", "queued_at", "started_at", "finished_at"]

    @extend_schema_field(AlarmSummarySerializer(many=True))
    def get_alarms(self, run) -> list[dict]:
        return cast(list[dict], AlarmSummarySerializer(alarm_summary(run), many=True).data)  # many=True: a ReturnList

    def validate_rewards(self, value):
        ids = [item["reward_function"].pk for item in value]
        if len(ids) != len(set(ids)):
            raise serializers.ValidationError("a reward function is listed twice")
        return value

    def validate_eval_rewards(self, value):
        ids = [item["reward_function"].pk for item in value]
        if len(ids) != len(set(ids)):
            raise serializers.ValidationError("a reward function is listed twice")
        return value

    def validate(self, attrs):
        if self.instance is not None and not self.instance.is_editable:
            raise serializers.ValidationError(
                f"run {self.instance.pk} is {self.instance.status}; its settings are frozen (clone it to change them)")
        attrs = self._with_environment(attrs)
        # Refused at creation as at every start (runs/training_runs/lifecycle.py): a run that would load a
        # verifiers environment its owner may not load is not even stored.
        if refusal := run_refusal(request_user(self), attrs, self.instance):
            raise PermissionDenied(refusal)
        if "config" in attrs or "config_template" in attrs or self.instance is None:
            try:
                attrs["config"] = complete_config(self._config_base(attrs), attrs.get("config"),
                                                  user=request_user(self))
            except serializers.ValidationError as exc:
                raise serializers.ValidationError({"config": exc.detail}) from None
            # against the live workers of its pool, then the machines of its pool's Ray cluster
            if problems := gpu_problems(attrs["config"]) or cluster_problems(attrs["config"]):
                raise serializers.ValidationError({"config": problems})
        merged = self._merged(attrs)
        # Under the list that brought the clash: the training rewards, else the evaluation's.
        if problem := shared_name_problem(merged["rewards"]):
            raise serializers.ValidationError({"rewards": [problem]})
        if problem := shared_name_problem(merged["rewards"] + merged["eval_rewards"]):
            raise serializers.ValidationError({"eval_rewards": [problem]})
        # Each reward finds the columns it reads (a judge's template, a built-in's column).
        if problems := training_problems(merged) or evaluation_problems(merged):
            raise serializers.ValidationError(problems)
        return attrs

    def _with_environment(self, attrs) -> dict:
        """A dataset and rewards left out (or empty) are the environment's. A run needs a dataset, and
        at least one reward function unless its environment is a verifiers environment, whose own
        rubric scores the episodes (it may still add some)."""
        environment = attrs.get("environment", self.instance.environment if self.instance else None)
        creating = self.instance is None
        verifiers = environment is not None and environment.kind == Environment.Kind.VERIFIERS
        if environment is not None:
            if verifiers and (problem := verifiers_problem(environment.verifiers_id)):
                raise serializers.ValidationError({"environment": problem})
            if verifiers and environment.dataset_id is None:
                environment.save()  # saved before its rows were a dataset: Environment.save makes it
            if (creating or "environment" in attrs) and not attrs.get("dataset") and environment.dataset:
                attrs["dataset"] = environment.dataset
            if (creating or "environment" in attrs) and not attrs.get("run_rewards"):
                attrs["run_rewards"] = [{"reward_function": er.reward_function, "weight": er.weight}
                                        for er in environment.environment_rewards.select_related("reward_function")]
        problems = self._dataset_problems(attrs)
        if (creating or "dataset" in attrs) and not attrs.get("dataset"):
            problems["dataset"] = ("choose a dataset" + (f" (environment {environment.name!r} brings none)"
                                                         if environment else ", or an environment"))
        rewards = attrs["run_rewards"] if "run_rewards" in attrs else (
            list(self.instance.run_rewards.all()) if self.instance else [])
        if not rewards and not verifiers and (creating or {"run_rewards", "environment"} & set(attrs)):
            problems["rewards"] = "choose at least one reward function" + ("" if environment else ", or an environment")
        if problems:
            raise serializers.ValidationError(problems)
        return attrs

    @staticmethod
    def _dataset_problems(attrs) -> dict:
        """A dataset still being checked (or refused) cannot be trained on; a verifiers environment's
        dataset is loaded from the environment: it must be installed."""
        return {field: problem for field in ("dataset", "eval_dataset")
                if (dataset := attrs.get(field)) is not None and (problem := dataset.readiness_problem() or (
                    dataset.source == Dataset.Source.ENVIRONMENT and verifiers_problem(dataset.hub_id)))}

    def _merged(self, attrs) -> dict:
        """The run's evaluation settings as they would stand after this request."""
        instance = self.instance
        merged = {
            "config": attrs.get("config", instance.config if instance else {}),
            "dataset": attrs.get("dataset", instance.dataset if instance else None),
            "eval_dataset": attrs.get("eval_dataset", instance.eval_dataset if instance else None),
        }
        if "run_eval_rewards" in attrs:
            merged["eval_rewards"] = [item["reward_function"] for item in attrs["run_eval_rewards"]]
        else:
            merged["eval_rewards"] = [rr.reward_function for rr in instance.run_eval_rewards.all()] if instance else []
        if "run_rewards" in attrs:
            merged["rewards"] = [item["reward_function"] for item in attrs["run_rewards"]]
        else:
            merged["rewards"] = [rr.reward_function for rr in instance.run_rewards.all()] if instance else []
        return merged

    def _config_base(self, attrs) -> dict:
        """What `config` is layered on: a newly chosen template's values (or the defaults),
        else the run's current settings, so that one edit does not undo the earlier ones."""
        if self.instance is not None and "config_template" not in attrs:
            return self.instance.config
        template = attrs.get("config_template")
        return template.values if template else {}

    @transaction.atomic
    def create(self, validated_data):
        rewards = validated_data.pop("run_rewards")
        eval_rewards = validated_data.pop("run_eval_rewards", [])
        run = Run.objects.create(**validated_data)
        self._set_rewards(run, rewards)
        self._set_rewards(run, eval_rewards, RunEvalReward)
        return run

    @transaction.atomic
    def update(self, instance, validated_data):
        rewards = validated_data.pop("run_rewards", None)
        eval_rewards = validated_data.pop("run_eval_rewards", None)
        run = super().update(instance, validated_data)
        if rewards is not None:
            run.run_rewards.all().delete()
            self._set_rewards(run, rewards)
        if eval_rewards is not None:
            run.run_eval_rewards.all().delete()
            self._set_rewards(run, eval_rewards, RunEvalReward)
        return run

    def _set_rewards(self, run, rewards, model=RunReward):
        model.objects.bulk_create(
            [model(run=run, reward_function=item["reward_function"], weight=item["weight"]) for item in rewards])


class ResumeRequest(StrictRequestSerializer):
    """What a resumed run may change: the machines it spans, to fit what the cluster has then
    (a run over N machines resumed on M). The step is the same at any count; the new config is
    checked as a new run's is, against the schema and the pool's machines."""
    trainer_machines = serializers.IntegerField(required=False, min_value=1, max_value=256,
                                                help_text="Machines the trainer spans from now on.")
    trainer_processes = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=1024,
                                                 help_text="Trainer processes on each machine (null: one per GPU).")
    inference_machines = serializers.IntegerField(required=False, min_value=0, max_value=64,
                                                  help_text="Machines of vLLM's own from now on.")

    def validate(self, attrs):
        if not attrs:
            return attrs
        run = self.context["run"]
        try:
            config = complete_config(run.config, attrs, user=request_user(self))
        except serializers.ValidationError as exc:
            raise serializers.ValidationError({"config": exc.detail}) from None
        if problems := gpu_problems(config) or cluster_problems(config):
            raise serializers.ValidationError({"config": problems})
        return {"config": config}
