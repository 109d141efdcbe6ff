"""One rollout of a verifiers MultiTurnEnv, driven a turn at a time by the episode runner, as
verifiers' own MultiTurnEnv.rollout() drives it:

    first step       init_state(row) and setup_state(state): the episode's state, kept here
    each step        the assistant turn joins state["trajectory"]; then is_completed(state) (its
                     stop conditions: max_turns, final_env_response, a ToolEnv's answer without a
                     call, ...) or env_response(messages, state), which answers the turn
    end              a rollout the runner stopped (a limit) is marked completed and cleaned up;
                     render_completion(state); the state goes to the rubric (verifiers_rubric.py)

A final_env_response (the environment's last word) ends the episode: the model never reads it,
but the rubric finds it in state["completion"], as in verifiers.
"""
import json
from typing import TYPE_CHECKING

from worker.trainer.environments.base import Episode

if TYPE_CHECKING:  # verifiers_env.py imports this module
    from worker.trainer.environments.verifiers_env import VerifiersEnvironment


class VerifiersEpisode(Episode):
    environment: "VerifiersEnvironment"

    def __init__(self, environment: "VerifiersEnvironment", row: dict):
        super().__init__(environment, row)
        self.env = environment.env
        self.state: dict | None = None
        self.reply: list[dict] = []  # the environment's last reply as it wrote it (tool call ids)

    def step(self, messages: list[dict]):
        return self.environment.run(self._step(messages))

    def end(self, reason: str):
        return self.environment.run(self._end(reason))

    async def _started(self) -> dict:
        if self.state is None:
            import verifiers as vf

            state = await self.env.init_state(input=rollout_input(self.row, self.env.env_id), client=None,
                                              model="policy")
            try:
                state = await self.env.setup_state(state)
            except vf.Error as exc:  # as in rollout(): the first is_completed() ends the episode
                state["error"] = exc
            self.state = state
        return self.state

    async def _step(self, messages: list[dict]):
        import verifiers as vf
        from verifiers.types import TrajectoryStep

        state = await self._started()
        conversation = self._conversation(messages, state)
        await self.env.add_trajectory_step(state, TrajectoryStep(
            prompt=conversation[:-1], completion=conversation[-1:], response=None, tokens=None, reward=None,
            advantage=None, is_truncated=False, trajectory_id=state["trajectory_id"], extras={}))
        if await self.env.is_completed(state):
            return None
        try:
            reply = list(await self.env.env_response(conversation, state))
        except vf.Error as exc:
            state["error"] = exc
            reply = []
        if state.get("final_env_response") is not None or state.get("error") is not None:
            await self.env.is_completed(state)  # its stop condition is recorded, its cleanup run
            return None
        self.reply = [dict(message) for message in reply]
        return [runner_message(message) for message in self.reply]

    async def _end(self, reason: str):
        failed = reason.startswith("environment_")
        if failed and self.state is None:
            return None
        state = await self._started()
        if not state["is_completed"]:  # stopped by the runner (a limit), or failed
            state["is_completed"], state["stop_condition"] = True, reason
            state["is_truncated"] = state.get("is_truncated") or reason in ("max_tokens", "context")
            await self.env._cleanup(state)
        if failed:
            return None
        await self.env.render_completion(state)
        return state

    def _conversation(self, messages: list[dict], state: dict) -> list[dict]:
        """The runner's conversation as verifiers writes it. The runner keeps text alone of earlier
        turns; verifiers' own copies (the previous step's, its last reply) keep the tool calls and
        their ids, and are used where they stand."""
        converted = [verifiers_message(message, index) for index, message in enumerate(messages)]
        if state["trajectory"]:
            before = [*state["trajectory"][-1]["prompt"], *state["trajectory"][-1]["completion"]]
            converted[:len(before)] = before
        count = len(self.reply)
        if count and list(map(_said, converted[-1 - count:-1])) == list(map(_said, self.reply)):
            converted[-1 - count:-1] = self.reply
        return converted


def rollout_input(row: dict, env_id: str) -> dict:
    """A dataset row as verifiers' rollout input: all its columns, the episode's first messages as
    prompt."""
    return {"example_id": 0, "task": env_id or "default", **row}


def verifiers_message(message: dict, index: int) -> dict:
    """A runner message in the OpenAI chat format verifiers reads: the parsed tool calls of an
    assistant turn become tool_calls (ids unique in the episode), none when it made none."""
    converted = {"role": message["role"], "content": message.get("content") or ""}
    if message.get("name"):
        converted["name"] = message["name"]
    if calls := message.get("tool_calls"):
        converted["tool_calls"] = [
            {"id": f"call_{index}_{number}", "type": "function",
             "function": {"name": call["name"], "arguments": json.dumps(call.get("values") or {})}}
            for number, call in enumerate(calls)]
    return converted


def runner_message(message: dict) -> dict:
    """A verifiers reply message as the runner takes one (replies.py): role, text, a tool's name."""
    reply = {"role": message.get("role", "user"), "content": _text(message)}
    if isinstance(message.get("name"), str):
        reply["name"] = message["name"]
    return reply


def _text(message: dict) -> str:
    """The message's text: content given as parts is their text, joined."""
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def _said(message: dict) -> tuple[str, str]:
    return message.get("role", "user"), _text(message)
