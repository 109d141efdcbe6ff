from django.db.models import Model
from drf_spectacular.utils import extend_schema_field
from pydantic import ValidationError as SchemaError
from rest_framework import serializers

from runs.rewards.model_rewards import SCHEMAS, ParamsRefused, checked_params, takes_api_key
from runs.rewards.models.function import RewardFunction
from runs.rewards.secrets import endpoint_moved, seal_api_key
from runs.training_runs.models import RunReward
from runs.web.fields import StrictCharField, StrictTextModelSerializer, VisiblePrimaryKeyField, unique_name_for_owner
from worker.trainer.for_control_plane.rewards import BUILTINS, source_problems

MAX_API_KEY_CHARS = 4096


class RewardFunctionSerializer(StrictTextModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    # Kept exactly as typed: trimming would shift the line numbers that errors point at.
    source = StrictCharField(  # type: ignore[assignment]  # a declared field, not Field.source (DRF pops it)
        required=False, allow_blank=True, trim_whitespace=False,
        help_text="Python defining reward(prompts, completions, **columns) (kind=code).")

    params = serializers.DictField(
        required=False,
        help_text="kind=builtin: the built-in's parameters; kind=judge: JudgeParams (template, mode, endpoint, "
                  "model, base_url, limits...); kind=reward_model: RewardModelParams (model, batch_size...). "
                  "Checked when saved and answered with every default filled in.")
    api_key = StrictCharField(
        write_only=True, required=False, allow_blank=True, max_length=MAX_API_KEY_CHARS,
        style={"input_type": "password"},  # the browsable API's form does not echo it either
        help_text="kind=judge with params.endpoint 'url' only: the endpoint's API key. Write-only: stored "
                  "encrypted and never answered (see api_key_set); only the worker running a run that names "
                  "this reward receives it. Left out, the stored key is kept, unless params.base_url changes: "
                  "the key is then forgotten (it was given for the old endpoint); \"\" clears it.")
    api_key_set = serializers.SerializerMethodField(help_text="Whether an API key is stored (it is never shown).")

    class Meta:
        model = RewardFunction
        fields = ["id", "name", "owner", "description", "kind", "builtin", "params", "source", "api_key",
                  "api_key_set", "created_at", "updated_at"]

    @extend_schema_field(serializers.BooleanField())
    def get_api_key_set(self, reward) -> bool:
        return bool(reward.api_key_sealed)

    def validate_name(self, value):
        return unique_name_for_owner(self, RewardFunction, value)

    def validate(self, attrs):
        api_key = attrs.pop("api_key", None)
        merged = {f: attrs.get(f, getattr(self.instance, f, None)) for f in ("kind", "builtin", "params", "source")}
        kind = merged["kind"]
        if kind == RewardFunction.Kind.BUILTIN:
            checked = {**self._check_builtin(merged["builtin"] or "", merged["params"] or {}), "source": ""}
        elif kind in SCHEMAS:
            checked = {"params": self._check_model_params(kind, attrs, merged["params"]), "builtin": "", "source": ""}
        else:
            problems = source_problems(merged["source"] or "")
            if problems:
                raise serializers.ValidationError({"source": problems})
            checked = {"builtin": "", "params": {}}
        return {**attrs, **checked, **self._api_key(kind, checked["params"], api_key)}

    def _check_builtin(self, name: str, params: dict) -> dict:
        if name not in BUILTINS:
            raise serializers.ValidationError(
                {"builtin": f"no built-in reward {name!r}; choose one of: {', '.join(BUILTINS)}"})
        try:
            full = BUILTINS[name].model_validate(params).model_dump()
        except SchemaError as exc:
            raise serializers.ValidationError(
                {"params": [f"{'.'.join(map(str, e['loc'])) or name}: {e['msg']}" for e in exc.errors()]}) from None
        return {"builtin": name, "params": full}

    def _check_model_params(self, kind: str, attrs: dict, params) -> dict:
        # A kind changed without new params: the old kind's params are not this one's.
        if "params" not in attrs and self.instance is not None and self.instance.kind != kind:
            params = {}
        try:
            return checked_params(kind, params or {})
        except ParamsRefused as exc:
            raise serializers.ValidationError({"params": exc.problems}) from None

    def _api_key(self, kind: str, params: dict, given: str | None) -> dict:
        """The sealed key to store: a new one sealed, "" clearing it; none given keeps the stored
        one while the reward still takes a key at the same endpoint, and drops it once it does not
        (no unused secret kept) or once base_url changes (the key is not sent where it was not given)."""
        if given is None:
            keeps = self.instance is not None and takes_api_key(kind, params) \
                and not endpoint_moved(self.instance.params, params)
            return {} if keeps else {"api_key_sealed": ""}
        given = given.strip()
        if not given:
            return {"api_key_sealed": ""}
        if not takes_api_key(kind, params):
            this = "a judge the worker serves (params.endpoint 'served')" if kind == "judge" else f"of kind {kind!r}"
            raise serializers.ValidationError(
                {"api_key": f"only a judge with params.endpoint 'url' is sent an API key; this reward is {this}"})
        return {"api_key_sealed": seal_api_key(given)}


class RunRewardSerializer(StrictTextModelSerializer):
    reward_function = VisiblePrimaryKeyField(queryset=RewardFunction.objects.all())
    name = serializers.CharField(source="reward_function.name", read_only=True)
    weight = serializers.FloatField(default=1.0, min_value=-100.0, max_value=100.0)

    class Meta:
        model: type[Model] = RunReward  # EnvironmentRewardSerializer's Meta names its own table
        fields = ["reward_function", "name", "weight"]
