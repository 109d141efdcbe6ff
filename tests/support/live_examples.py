"""One live message of each type, written the way the browser receives it (the shape
frontend/static/js/run_live.js and run_page.js read): the fixed point of the message models."""
from runs.live.messages import MESSAGES, message_type

RUN_STATE = {"status": "running", "cancel_requested": False, "step": 3, "error": "", "attempt": 1}
SAMPLE_ROW = {
    "id": 7, "step": 3, "group": 0, "prompt": "What is 2+2?", "completion": "#### 4",
    "rewards": {"acc": 1.0, "fmt": None}, "total_reward": 1.0, "advantage": -0.5, "model_version": 2,
    "staleness": 1, "num_tokens": 5, "finish_reason": "stop", "turns": None, "end_reason": "",
    "judgements": {"tone": "7"},  # a judge's raw answer, by reward name (None without judges)
}
# An episode of a multi-turn rollout: a tool call, its result, a failed call, the final answer.
EPISODE_ROW = {
    "id": 8, "step": 3, "group": 1, "prompt": "<|im_start|>user\nWhat is 17 * 23?<|im_end|>\n",
    "completion": "391", "rewards": {"acc": 1.0}, "total_reward": 1.0, "advantage": 0.5, "model_version": 2,
    "staleness": 1, "num_tokens": 31, "finish_reason": "stop", "end_reason": "done", "judgements": None,
    "turns": [
        {"role": "user", "content": "What is 17 * 23?", "tool_calls": [], "trained": False, "model_version": None,
         "num_tokens": 9, "error": ""},
        {"role": "assistant", "content": "", "tool_calls": [{"name": "calc", "arguments": '{"expr": "17*23"}'}],
         "trained": True, "model_version": 2, "num_tokens": 12, "error": ""},
        {"role": "tool", "content": "391", "tool_calls": [], "trained": False, "model_version": None,
         "num_tokens": 2, "error": ""},
        {"role": "assistant", "content": "391", "tool_calls": [], "trained": True, "model_version": 3,
         "num_tokens": 19, "error": "malformed tool call"},
    ],
}
LOG_LINE_ROW = {"id": 11, "time": "2024-05-01T12:00:00.250000Z", "level": "warning", "source": "trainer",
                "message": "slow step"}
CHECKPOINT_ROW = {"id": 5, "step": 3, "path": "/ckpt/3", "size_bytes": 1024, "model_version": 2,
                  "created_at": "2024-05-01T12:00:00Z", "in_store": False}

EVALUATION_ROW = {"step": 10, "model_version": 10, "examples": 32}
ALARM_ROW = {"id": 2, "kind": "entropy_collapse", "step": 12, "message": "entropy 0.01 below 0.05 for 3 steps",
             "values": {"train/entropy": 0.01}, "stopped_run": False, "created_at": "2024-05-01T12:00:00Z"}


def wire_messages(run_id: int) -> dict[str, dict]:
    """{type: message as JSON-decoded by the browser}, every type of LiveMessage once."""
    def on_run(kind, payload):
        return {"type": kind, "run": run_id, "payload": payload}

    return {
        "run.hello": on_run("run.hello", RUN_STATE),
        "run.status": on_run("run.status", {**RUN_STATE, "status": "failed", "error": "out of memory"}),
        "run.metrics": on_run("run.metrics", {"points": [
            {"step": 3, "time": 1714564800.25, "values": {"train/loss": 0.5, "rollout/reward_mean": -1.5e-07}}]}),
        "run.samples": on_run("run.samples", {"samples": [SAMPLE_ROW, EPISODE_ROW]}),
        "run.log": on_run("run.log", {"lines": [LOG_LINE_ROW]}),
        "run.checkpoint": on_run("run.checkpoint", CHECKPOINT_ROW),
        "run.evaluation": on_run("run.evaluation", EVALUATION_ROW),
        "run.alarm": on_run("run.alarm", ALARM_ROW),
        "pong": {"type": "pong"},
    }


def all_message_types() -> set[str]:
    return {message_type(model) for model in MESSAGES}
