from pydantic import ValidationError as SchemaError
from rest_framework import serializers

from runs.api.serializers.fields import StrictCharField, StrictTextModelSerializer, unique_name_for_owner
from runs.models import RewardFunction
from worker.trainer.rewards.catalog import BUILTINS
from worker.trainer.rewards.source_check import source_problems


class RewardFunctionSerializer(StrictTextModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    # Kept exactly as typed: trimming would shift the line numbers that errors point at.
    source = StrictCharField(required=False, allow_blank=True, trim_whitespace=False,
                                   help_text="Python defining reward(prompts, completions, **columns) (kind=code).")

    params = serializers.DictField(required=False, help_text="The built-in's parameters (kind=builtin).")

    class Meta:
        model = RewardFunction
        fields = ["id", "name", "owner", "description", "kind", "builtin", "params", "source",
                  "created_at", "updated_at"]

    def validate_name(self, value):
        return unique_name_for_owner(self, RewardFunction, value)

    def validate(self, attrs):
        merged = {f: attrs.get(f, getattr(self.instance, f, None)) for f in ("kind", "builtin", "params", "source")}
        if merged["kind"] == RewardFunction.Kind.BUILTIN:
            return {**attrs, **self._check_builtin(merged["builtin"] or "", merged["params"] or {}), "source": ""}
        problems = source_problems(merged["source"] or "")
        if problems:
            raise serializers.ValidationError({"source": problems})
        return {**attrs, "builtin": "", "params": {}}

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

