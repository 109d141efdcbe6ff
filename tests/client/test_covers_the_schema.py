"""The Python client against the API's own OpenAPI schema, generated in-process: every operation
is called by a ControlPlane method or left out with its reason (client/operations.py), no entry
names an operation or a method that is not there, and each method sends the method and path of
the operations it claims; and every command of `grpo` together reaches every operation the client
calls but the few left to Python with their reason. A recording transport answers every request,
so nothing leaves the process."""
import argparse
import inspect
import re
from pathlib import Path

import httpx
import pytest

from client.api import ControlPlane
from client.cli.main import main, parser
from client.operations import CALLED_BY, EXCLUDED, NOT_ON_THE_COMMAND_LINE, OUTSIDE_THE_SCHEMA

HTTP_METHODS = ("get", "post", "put", "patch", "delete")
# Arguments no annotation can make up: a file to upload, where a download goes.
ARGUMENTS = {"upload_dataset": {"path": __file__, "name": "x"}}
# What the recording transport answers, whatever is asked: enough for every method to finish.
ANSWER = {"id": 1, "results": [], "series": {}, "steps": [], "state": "done", "progress": "done",
          "result": {"rows": []}, "status": "succeeded", "current_step": 0, "max_steps": 1, "alarms": [],
          "error_message": "",
          "components": {"schemas": {"PresetEnum": {"enum": ["cpu-demo"]}}}}
# Flags a command needs that no made-up value satisfies (one of a required pair).
COMMAND_FLAGS = {("datasets", "create"): ["--generator", "arithmetic"]}


@pytest.fixture(scope="module")
def operations() -> dict[str, tuple[str, str]]:
    """operationId → (METHOD, path template under /api/), from the schema the API serves."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    return {operation["operationId"]: (method.upper(), path.removeprefix("/api/"))
            for path, methods in schema["paths"].items()
            for method, operation in methods.items() if method in HTTP_METHODS}


def test_every_operation_is_called_by_the_client_or_left_out_with_a_reason(operations):
    assert not set(operations) - set(CALLED_BY) - set(EXCLUDED), "operations neither called nor left out"
    assert not set(CALLED_BY) & set(EXCLUDED), "operations both called and left out"
    assert all(reason.strip() for reason in EXCLUDED.values())


def test_no_entry_names_an_operation_the_api_does_not_have(operations):
    assert not (set(CALLED_BY) | set(EXCLUDED)) - set(operations)


def test_every_public_method_of_the_client_is_in_the_table_and_every_named_method_exists():
    named = {method for methods in CALLED_BY.values() for method in methods} | set(OUTSIDE_THE_SCHEMA)
    public = {name for name, _ in inspect.getmembers(ControlPlane, inspect.isfunction) if not name.startswith("_")}
    assert named - public == set(), "the table names methods the client lacks"
    assert public - named - {"close"} == set(), "client methods the table does not name"


def test_each_method_sends_the_method_and_path_of_the_operation_it_claims(operations, tmp_path):
    for operation_id, methods in CALLED_BY.items():
        method, template = operations[operation_id]
        for name in methods:
            sent = requests_of(name, tmp_path)
            assert any(operation_of(operations, r) == operation_id for r in sent), (
                f"{name} claims {operation_id} ({method} /api/{template}) but sent "
                f"{[(r.method, r.url.path) for r in sent]}")


def test_the_commands_of_grpo_reach_every_operation_the_client_calls_but_those_left_to_python(
        operations, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_TOKEN", "hf_made_up")
    monkeypatch.chdir(tmp_path)  # where a download goes
    reached = set()
    for path, command in leaf_commands(parser()):
        api, sent = recording_client()
        argv = [*path, *made_up_command_line(command, tmp_path), *COMMAND_FLAGS.get(path, [])]
        assert main(argv, api=api) == 0, f"grpo {' '.join(argv)}: {capsys.readouterr().err}"
        reached |= {operation_of(operations, request) for request in sent}
    assert set(CALLED_BY) - set(NOT_ON_THE_COMMAND_LINE) - reached == set(), "operations no command reaches"
    assert set(NOT_ON_THE_COMMAND_LINE) & reached == set(), "operations said to be Python's only, reached"
    assert set(NOT_ON_THE_COMMAND_LINE) <= set(CALLED_BY), "operations said to be Python's only, not called"


def operation_of(operations: dict[str, tuple[str, str]], request: httpx.Request) -> str | None:
    """The operation a request is, a path without placeholders first (configs/presets/ before configs/{id}/)."""
    for operation_id, (method, template) in sorted(operations.items(), key=lambda item: item[1][1].count("{")):
        pattern = "^/api/" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$"
        if request.method == method and re.match(pattern, request.url.path):
            return operation_id
    return None


def leaf_commands(command: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    for action in command._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from leaf_commands(sub, (*path, name))
    if command._defaults.get("command"):
        yield path, command


def made_up_command_line(command: argparse.ArgumentParser, tmp_path: Path) -> list[str]:
    """--json where taken, and a value for each positional and required flag, from its type and choices."""
    argv = ["--json"] if "--json" in command._option_string_actions else []
    for action in command._actions:
        if action.option_strings and not action.required:
            continue
        if isinstance(action, argparse._HelpAction):
            continue
        value = (action.choices[0] if action.choices else "1" if action.type is int
                 else __file__ if action.type is Path else "x")
        values = [value, "2"] if action.nargs == "+" else [value]
        argv += [action.option_strings[0], *values] if action.option_strings else values
    return argv


def recording_client() -> tuple[ControlPlane, list[httpx.Request]]:
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        if request.url.path.endswith("/pushes/"):
            return httpx.Response(200, json=[{"id": 1}])
        if request.url.path.endswith("/download/"):
            return httpx.Response(200, content=b"tar")
        return httpx.Response(200, json=ANSWER)

    return ControlPlane("http://127.0.0.1:9", "token", transport=httpx.MockTransport(answer)), sent


def requests_of(name: str, tmp_path: Path) -> list[httpx.Request]:
    api, sent = recording_client()
    method = getattr(api, name)
    method(**made_up_arguments(name, method, tmp_path))
    return sent


def made_up_arguments(name: str, method, tmp_path: Path) -> dict:
    """A value for each required parameter, from its annotation."""
    by_type = {int: 1, str: "x", Path: tmp_path / f"{name}.out", list[int]: [1, 2], list[str]: ["x"]}
    arguments = {}
    for parameter in inspect.signature(method).parameters.values():
        if parameter.default is parameter.empty and parameter.kind is parameter.POSITIONAL_OR_KEYWORD:
            annotation = parameter.annotation
            arguments[parameter.name] = by_type.get(annotation, [1, 2] if "list" in str(annotation) else 1)
    return {**arguments, **ARGUMENTS.get(name, {})}
