"""Tool calls read from what the model wrote, in the hermes and the text format; a call that cannot
be read is still a call, with an error for the environment's answer."""
import json

from worker.trainer.environments.tool_calls import ParsedCall, parse_calls, stop_strings, tool_schema

TOOLS = ["calculate", "lookup"]


def test_hermes_calls_are_read_with_their_arguments_in_order():
    text = ('First <tool_call>{"name": "calculate", "arguments": {"expression": "2+3"}}</tool_call> then '
            '<tool_call>\n{"name": "lookup", "arguments": "{\\"word\\": \\"cat\\"}"}\n</tool_call>')
    first, second = parse_calls(text, "hermes", TOOLS)
    assert first == ParsedCall("calculate", json.dumps({"expression": "2+3"}), {"expression": "2+3"})
    assert second.name == "lookup" and second.values == {"word": "cat"} and not second.error
    assert first.as_message_call() == {"name": "calculate", "arguments": '{"expression": "2+3"}'}


def test_a_hermes_call_cut_off_at_the_end_is_still_read():
    calls = parse_calls('<tool_call>{"name": "calculate", "arguments": {"expression": "1"}}', "hermes", TOOLS)
    assert [c.name for c in calls] == ["calculate"] and not calls[0].error


def test_unreadable_hermes_calls_carry_an_error():
    not_json, = parse_calls("<tool_call>{name: calculate}</tool_call>", "hermes", TOOLS)
    assert not_json.name == "" and "not JSON" in not_json.error
    unknown, = parse_calls('<tool_call>{"name": "shell", "arguments": {}}</tool_call>', "hermes", TOOLS)
    assert unknown.name == "shell" and "there is no tool 'shell'" in unknown.error
    bad_arguments, = parse_calls('<tool_call>{"name": "calculate", "arguments": [1]}</tool_call>', "hermes", TOOLS)
    assert "arguments are an object" in bad_arguments.error


def test_text_calls_take_the_text_between_the_tags_as_the_one_argument():
    calls = parse_calls("<calculate> 17 * 23 </calculate> and <think>no tool</think>", "text", TOOLS,
                        {"calculate": "expression"})
    assert calls == [ParsedCall("calculate", "17 * 23", {"expression": "17 * 23"})]
    assert parse_calls("<lookup>cat</lookup>", "text", TOOLS)[0].values == {"input": "cat"}


def test_text_calls_without_tools_or_tags_are_none():
    assert parse_calls("#### 5", "text", TOOLS) == []
    assert parse_calls("<calculate>1</calculate>", "text", []) == []


def test_generation_stops_after_a_call_so_the_environment_answers_first():
    assert stop_strings("hermes", TOOLS) == ["</tool_call>"]
    assert stop_strings("text", TOOLS) == ["</calculate>", "</lookup>"]
    assert stop_strings("text", []) == []


def test_a_one_argument_tool_as_chat_templates_take_it():
    schema = tool_schema("calculate", "Evaluates.", "expression", "An expression.")
    assert schema["function"]["parameters"]["required"] == ["expression"]
    assert schema["function"]["parameters"]["properties"]["expression"]["type"] == "string"
