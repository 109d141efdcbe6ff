"""Environment forms: what was posted, made into the API's EnvironmentSerializer payload (so the page
and the API accept and refuse the same things), and the serializer's errors put back by input.
The built-ins' parameter fields come from their catalog, as the reward forms' do."""
import json

from runs.rewards.forms import builtin_choices, params_from_form
from runs.web.json_bodies import JSONTooDeep, bounded_loads
from worker.trainer.for_control_plane.environments import BUILTIN_ENVIRONMENTS, DESCRIPTIONS

STARTER_SOURCE = '''"""The model answers; step() replies; until step() returns None (done) or max_turns is reached.

messages: the conversation so far, chat messages {"role", "content"}. The model's last turn is
messages[-1]; its calls to the TOOLS below are parsed into messages[-1]["tool_calls"], each
{"name", "arguments" (as written), "values" (the arguments read)}.
row: the dataset row (row["answer"], ...).
Reply None (done), text (one user message), a message {"role": "user" or "tool", "content": ...}
or a list of them.
"""

# Optional: tools the model may call, name -> description (or a dict naming the parameter).
TOOLS = {"square": {"description": "Squares a number.", "parameter": "number"}}


def start(row):
    """Optional: the episode's first messages; None keeps the dataset's prompt."""
    return None


def step(messages, row):
    last = messages[-1]
    calls = last.get("tool_calls") or []
    if calls:  # answer each call; the model goes on from the results
        return [{"role": "tool", "name": call["name"], "content": square(call["values"].get("number", ""))}
                for call in calls]
    answer = str(row.get("answer", "")).split("####")[-1].strip()
    if answer and last["content"].rstrip().endswith(answer):
        return None  # right: the episode is done
    return "Not quite. Check your arithmetic and answer again, ending with #### <number>."


def square(text):
    try:
        return str(float(text) ** 2)
    except ValueError:
        return f"error: {text!r} is not a number"
'''


def common_submission(post, kind: str) -> dict:
    """Name, description, dataset and rubric, as the serializer takes them."""
    ticked = [value for value in post.getlist("rubric") if value.strip()]
    return {"name": post.get("name", "").strip(), "description": post.get("description", ""), "kind": kind,
            "dataset": post.get("dataset", "").strip() or None,
            "rubric": [{"reward_function": reward_id, "weight": post.get(f"weight-{reward_id}", "1").strip() or "1"}
                       for reward_id in ticked]}


def builtin_submission(post) -> tuple[dict, dict]:
    data = {**common_submission(post, "builtin"), "builtin": post.get("builtin", "")}
    if data["builtin"] not in BUILTIN_ENVIRONMENTS:
        return data, {}
    data["params"], input_errors = params_from_form(data["builtin"], post, BUILTIN_ENVIRONMENTS)
    return data, input_errors


def code_submission(post) -> dict:
    return {**common_submission(post, "code"), "source": post.get("source", "").replace("\r\n", "\n")}


def verifiers_submission(post) -> tuple[dict, dict]:
    data = {**common_submission(post, "verifiers"), "verifiers_id": post.get("verifiers_id", "").strip()}
    raw = post.get("params_json", "").strip() or "{}"
    try:
        data["params"] = bounded_loads(raw)
    except json.JSONDecodeError as exc:
        data["params_json"] = raw
        return data, {"params": [f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"]}
    except JSONTooDeep as exc:
        data["params_json"] = raw
        return data, {"params": [str(exc)]}
    return data, {}


def builtin_fields(selected: str, params: dict, errors: dict) -> list[dict]:
    return builtin_choices(selected, params, errors, BUILTIN_ENVIRONMENTS, DESCRIPTIONS)


def rubric_rows(rewards, rubric: list[dict]) -> list[dict]:
    """One row per reward the user may pick, ticked with its weight where the rubric has it."""
    weights = {str(item["reward_function"]): str(item["weight"]) for item in rubric}
    return [{"reward": reward, "checked": str(reward.pk) in weights, "weight": weights.get(str(reward.pk), "1")}
            for reward in rewards]


def texts(messages) -> list[str]:
    """A serializer's error tree as lines (the rubric's come per item)."""
    if isinstance(messages, dict):
        return [f"{key}: {text}" if not str(key).isdigit() else text
                for key, value in messages.items() for text in texts(value)]
    if isinstance(messages, (list, tuple)):
        return [text for message in messages for text in texts(message)]
    return [str(messages)]
