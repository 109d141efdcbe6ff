"""What the process for built-ins answers (worker/trainer/for_control_plane/builtin_child.py), asked in-process:
a built-in reward's values, a built-in environment's reply, and a failure as an error it names."""
from worker.trainer.for_control_plane.builtin_child import answer


def test_a_built_in_reward_answers_its_values():
    reply = answer({"op": "reward", "builtin": "exact_match", "params": {}, "prompts": ["p", "p"],
                    "completions": ["4", "5"], "columns": {"answer": ["4", "4"]}})
    assert reply == {"ok": True, "values": [1.0, 0.0]}


def test_a_built_in_environment_step_answers_its_reply():
    messages = [{"role": "assistant", "content": "<calculate>6*7</calculate>",
                 "tool_calls": [{"name": "calculate", "arguments": "6*7", "values": {"expression": "6*7"}}]}]
    reply = answer({"op": "env_step", "builtin": "calculator", "params": {}, "tool_format": "text",
                    "messages": messages, "row": {}})
    assert reply == {"ok": True, "reply": [{"role": "tool", "name": "calculate", "content": "42"}]}


def test_a_failing_built_in_answers_an_error_naming_what_failed():
    reply = answer({"op": "reward", "builtin": "accuracy", "params": {}, "prompts": ["p"], "completions": ["4"],
                    "columns": {}})
    assert reply["ok"] is False and reply["kind"] == "exception"
    assert reply["message"].startswith("KeyError") and "no column 'answer'" in reply["message"]
