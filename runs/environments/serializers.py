"""Environments: a dataset, how an episode proceeds (a built-in, Python code or a verifiers id) and
the rubric that scores it. Each kind's fields are checked as it is saved, so that a run never
starts on an environment that cannot load."""
from django.db import transaction
from pydantic import ValidationError as SchemaError
from rest_framework import serializers

from runs.datasets.models import Dataset
from runs.environments.models.environment import Environment, EnvironmentReward
from runs.rewards.serializers import RunRewardSerializer
from runs.web.fields import StrictCharField, StrictTextModelSerializer, VisiblePrimaryKeyField, unique_name_for_owner
from worker.trainer.for_control_plane.environments import BUILTIN_ENVIRONMENTS, source_problems, verifiers_problem

KIND_FIELDS = ("kind", "builtin", "params", "source", "verifiers_id", "dataset")


class EnvironmentRewardSerializer(RunRewardSerializer):
    """A rubric entry reads as a run's reward does: the function, its name, its weight."""
    class Meta(RunRewardSerializer.Meta):
        model = EnvironmentReward


class EnvironmentSerializer(StrictTextModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    dataset = VisiblePrimaryKeyField(
        queryset=Dataset.objects.all(), required=False, allow_null=True,
        help_text="The tasks (required for builtin and code). A verifiers environment brings its own: a dataset "
                  "of source `environment` is made for it as it is saved.")
    rubric = EnvironmentRewardSerializer(
        source="environment_rewards", many=True, required=False,
        help_text="Reward functions and weights that score a finished episode (at least one for builtin and code).")
    params = serializers.DictField(required=False, help_text="The built-in's parameters (kind=builtin), or the "
                                   "verifiers environment's load_environment arguments (kind=verifiers).")
    # Kept exactly as typed: trimming would shift the line numbers that errors point at.
    source = StrictCharField(  # type: ignore[assignment]  # a declared field, not Field.source (DRF pops it)
        required=False, allow_blank=True, trim_whitespace=False,
        help_text="Python defining step(messages, row), optionally start(row) and TOOLS (kind=code).")

    class Meta:
        model = Environment
        fields = ["id", "name", "owner", "description", "kind", "builtin", "params", "source", "verifiers_id",
                  "dataset", "rubric", "created_at", "updated_at"]
        extra_kwargs = {"kind": {"help_text": (
            "builtin, code or verifiers. code needs the permission runs.author_reward_code; so does verifiers "
            "(it runs the package's code on the workers) unless an operator lists its id in "
            "VERIFIERS_ENVIRONMENTS_ALLOWED. Without it: 403, nothing saved.")}}

    def validate_name(self, value):
        return unique_name_for_owner(self, Environment, value)

    def validate_rubric(self, value):
        ids = [item["reward_function"].pk for item in value]
        if len(ids) != len(set(ids)):
            raise serializers.ValidationError("a reward function is listed twice")
        return value

    def validate(self, attrs):
        merged = {f: attrs[f] if f in attrs else getattr(self.instance, f, None) for f in KIND_FIELDS}
        kind = merged["kind"]
        if kind == Environment.Kind.VERIFIERS:
            attrs.pop("dataset", None)  # its own, made as it is saved (Environment.save)
            return {**attrs, **self._check_verifiers(merged), "builtin": "", "source": ""}
        problems = {}
        if merged["dataset"] is None:
            problems["dataset"] = "choose the dataset whose rows the episodes start from"
        if not self._rubric(attrs):
            problems["rubric"] = "choose at least one reward function to score an episode"
        if problems:
            raise serializers.ValidationError(problems)
        if kind == Environment.Kind.BUILTIN:
            return {**attrs, **self._check_builtin(merged["builtin"] or "", merged["params"] or {}),
                    "source": "", "verifiers_id": ""}
        if refused := source_problems(merged["source"] or ""):
            raise serializers.ValidationError({"source": refused})
        return {**attrs, "builtin": "", "params": {}, "verifiers_id": ""}

    def _rubric(self, attrs) -> list:
        if "environment_rewards" in attrs:
            return attrs["environment_rewards"]
        return list(self.instance.environment_rewards.all()) if self.instance else []

    def _check_builtin(self, name: str, params: dict) -> dict:
        if name not in BUILTIN_ENVIRONMENTS:
            raise serializers.ValidationError(
                {"builtin": f"no built-in environment {name!r}; choose one of: {', '.join(BUILTIN_ENVIRONMENTS)}"})
        try:
            full = BUILTIN_ENVIRONMENTS[name].model_validate(params).model_dump()
        except SchemaError as exc:
            raise serializers.ValidationError(
                {"params": [f"{'.'.join(map(str, e['loc'])) or name}: {e['msg']}" for e in exc.errors()]}) from None
        return {"builtin": name, "params": full}

    def _check_verifiers(self, merged) -> dict:
        if problem := verifiers_problem(merged["verifiers_id"] or ""):
            raise serializers.ValidationError({"verifiers_id": problem})
        return {"params": merged["params"] or {}}

    @transaction.atomic
    def create(self, validated_data):
        rubric = validated_data.pop("environment_rewards", [])
        environment = Environment.objects.create(**validated_data)
        self._set_rubric(environment, rubric)
        return environment

    @transaction.atomic
    def update(self, instance, validated_data):
        rubric = validated_data.pop("environment_rewards", None)
        environment = super().update(instance, validated_data)
        if rubric is not None:
            environment.environment_rewards.all().delete()
            self._set_rubric(environment, rubric)
        return environment

    def _set_rubric(self, environment, rubric):
        EnvironmentReward.objects.bulk_create([
            EnvironmentReward(environment=environment, reward_function=item["reward_function"], weight=item["weight"])
            for item in rubric])
