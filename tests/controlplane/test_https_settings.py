"""An https PUBLIC_URL turns on secure cookies, HSTS and PUBLIC_URL as a trusted origin; an http one
changes nothing. Settings are read once per process, so each case reads them in a child process."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
READ = ("import json, django; django.setup(); from django.conf import settings as s; "
        "print(json.dumps({n: getattr(s, n, None) for n in ('SESSION_COOKIE_SECURE', 'CSRF_COOKIE_SECURE', "
        "'SECURE_HSTS_SECONDS', 'SECURE_PROXY_SSL_HEADER', 'CSRF_TRUSTED_ORIGINS')}))")


def read_settings(tmp_path, **env) -> subprocess.CompletedProcess:
    variables = {**os.environ, "DJANGO_SETTINGS_MODULE": "controlplane.settings", "GRPO_DOTENV": "0",
                 "DATA_DIR": str(tmp_path), "CSRF_TRUSTED_ORIGINS": "", **env}
    for name in ("HSTS_SECONDS", "TRUST_X_FORWARDED_PROTO"):
        if name not in env:
            variables.pop(name, None)
    return subprocess.run([sys.executable, "-c", READ], cwd=ROOT, env=variables, capture_output=True,
                          text=True, timeout=120)


def settings_with(tmp_path, **env) -> dict:
    result = read_settings(tmp_path, **env)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_https_public_url_secures_cookies_and_sends_hsts_for_a_day(tmp_path):
    read = settings_with(tmp_path, PUBLIC_URL="https://grpo.example.org/base/")
    assert read == {"SESSION_COOKIE_SECURE": True, "CSRF_COOKIE_SECURE": True, "SECURE_HSTS_SECONDS": 86400,
                    "SECURE_PROXY_SSL_HEADER": None, "CSRF_TRUSTED_ORIGINS": ["https://grpo.example.org"]}


def test_http_public_url_changes_nothing(tmp_path):
    read = settings_with(tmp_path, PUBLIC_URL="http://10.0.0.5:8000")
    assert read == {"SESSION_COOKIE_SECURE": False, "CSRF_COOKIE_SECURE": False, "SECURE_HSTS_SECONDS": 0,
                    "SECURE_PROXY_SSL_HEADER": None, "CSRF_TRUSTED_ORIGINS": []}


def test_the_operator_sets_hsts_and_trusts_the_proxy(tmp_path):
    read = settings_with(tmp_path, PUBLIC_URL="https://grpo.example.org:8443", HSTS_SECONDS="31536000",
                         TRUST_X_FORWARDED_PROTO="1")
    assert read["SECURE_HSTS_SECONDS"] == 31536000
    assert read["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert read["CSRF_TRUSTED_ORIGINS"] == ["https://grpo.example.org:8443"]


@pytest.mark.parametrize("name, value", [("HSTS_SECONDS", "a year"), ("TRUST_X_FORWARDED_PROTO", "maybe")])
def test_a_malformed_value_stops_the_start_naming_it(tmp_path, name, value):
    result = read_settings(tmp_path, PUBLIC_URL="https://grpo.example.org", **{name: value})
    assert result.returncode != 0 and f"ImproperlyConfigured: {name}={value!r}" in result.stderr
