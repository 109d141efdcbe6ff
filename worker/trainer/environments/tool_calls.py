"""Tool calls in what the model wrote, in one of two formats (config tool_call_format):

    hermes   <tool_call>{"name": "calculate", "arguments": {"expression": "2+3"}}</tool_call>
             what chat templates that take `tools` teach (Qwen2.5, Hermes, Llama 3.1 and others)
    text     <calculate>2+3</calculate>
             the fallback for templates without tools (SmolLM2): one argument, the text between
             the tags, for each tool the environment names

A call that cannot be read is still a call, with an error the environment answers with, so that
a malformed call costs the model a turn, not the run.
"""
import json
import re
from dataclasses import dataclass

HERMES = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)


@dataclass(frozen=True)
class ParsedCall:
    name: str
    arguments: str           # as written: JSON text for hermes, the argument itself for text
    values: dict             # the arguments read (empty when they could not be)
    error: str = ""

    def as_message_call(self) -> dict:
        return {"name": self.name, "arguments": self.arguments}


def stop_strings(fmt: str, tool_names: list[str]) -> list[str]:
    """Where generation stops so that the environment answers a call before the model goes on."""
    if not tool_names:
        return []
    return ["</tool_call>"] if fmt == "hermes" else [f"</{name}>" for name in tool_names]


def parse_calls(text: str, fmt: str, tool_names: list[str], argument_names: dict[str, str] | None = None
                ) -> list[ParsedCall]:
    """The calls in `text`. `argument_names`: for the text format, the parameter each tool's one
    argument fills (calculate → expression)."""
    if fmt == "hermes":
        return [_hermes_call(body, tool_names) for body in HERMES.findall(text)]
    calls = []
    for name in tool_names:
        for body in re.findall(rf"<{re.escape(name)}>(.*?)(?:</{re.escape(name)}>|$)", text, re.DOTALL):
            parameter = (argument_names or {}).get(name, "input")
            calls.append(ParsedCall(name, body.strip(), {parameter: body.strip()}))
    return calls


def _hermes_call(body: str, tool_names: list[str]) -> ParsedCall:
    try:
        payload = json.loads(body.strip())
    except json.JSONDecodeError as exc:
        return ParsedCall("", body.strip(), {}, f"the tool call is not JSON ({exc.msg} at column {exc.colno})")
    if not isinstance(payload, dict) or not isinstance(payload.get("name"), str):
        return ParsedCall("", body.strip(), {}, 'a tool call is {"name": ..., "arguments": {...}}')
    name, arguments = payload["name"], payload.get("arguments", {})
    if isinstance(arguments, str):  # some models write the arguments as a JSON string
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            arguments = {"input": arguments}
    if not isinstance(arguments, dict):
        return ParsedCall(name, json.dumps(arguments), {}, "a tool call's arguments are an object")
    if name not in tool_names:
        return ParsedCall(name, json.dumps(arguments), arguments,
                          f"there is no tool {name!r}; tools: {', '.join(tool_names) or 'none'}")
    return ParsedCall(name, json.dumps(arguments), arguments)


def tool_schema(name: str, description: str, parameter: str, parameter_description: str) -> dict:
    """A one-argument tool as chat templates take `tools`."""
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": {parameter: {"type": "string",
                                                                    "description": parameter_description}},
                       "required": [parameter]}}}
