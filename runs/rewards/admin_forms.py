"""The reward admin's form: a judge's and a reward model's params checked as the API checks them,
and an endpoint judge's API key written through a password field that never shows it.

The key is sealed when saved (runs/rewards/secrets.py); the page says only whether one is set.
A blank field keeps the stored key, "clear" removes it, and a reward that no longer calls an
endpoint (kind or endpoint changed) or calls another (base_url changed, staff's edit too) drops it
unless a new key is typed, as the API does (runs/rewards/serializers.py).
"""
from django import forms
from django.core.exceptions import ValidationError

from runs.accounts.authoring_admin import AuthoringAdminForm
from runs.rewards.model_rewards import SCHEMAS, ParamsRefused, checked_params, takes_api_key
from runs.rewards.secrets import endpoint_moved, seal_api_key


class RewardFunctionAdminForm(AuthoringAdminForm):
    api_key = forms.CharField(
        label="API key", required=False, strip=True, max_length=4096,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="A judge with endpoint 'url' only. Stored encrypted and never shown again; leave blank to "
                  "keep the stored key (a changed base_url forgets it: type the key for the new one).")
    clear_api_key = forms.BooleanField(label="Clear the stored API key", required=False)

    def clean(self):
        cleaned = super().clean()
        kind = cleaned.get("kind", self.instance.kind)
        params = cleaned.get("params", self.instance.params)
        if kind in SCHEMAS:
            try:
                params = cleaned["params"] = checked_params(kind, params or {})
            except ParamsRefused as exc:
                self.add_error("params" if "params" in self.fields else None, exc.problems)
                return cleaned
        if cleaned.get("api_key") and not takes_api_key(kind, params or {}):
            self.add_error("api_key", ValidationError("only a judge with params.endpoint 'url' is sent an API key"))
        moved = self.instance.pk is not None and endpoint_moved(self.instance.params, params)
        self.keeps_key = takes_api_key(kind, params or {}) and not cleaned.get("clear_api_key")
        self.forgets_key = not self.keeps_key or (moved and not cleaned.get("api_key"))
        return cleaned

    def save(self, commit=True):
        if self.cleaned_data.get("api_key") and self.keeps_key:
            self.instance.api_key_sealed = seal_api_key(self.cleaned_data["api_key"])
        elif self.forgets_key:
            self.instance.api_key_sealed = ""
        return super().save(commit)
