"""One episode: the policy and an environment taking turns until the environment is done or a
limit is reached.

Each assistant turn is a /v1/completions request whose prompt is the episode's context so far,
as token ids (the server's prefix cache finds the shared beginning again). Its sampled tokens
and log-probs are kept as they are, trained, and tagged with the policy version that sampled
them; the environment's replies are tokenised through the chat template and masked out of the
loss. The G episodes of a prompt are its group: their advantages are computed per episode.
"""
import asyncio
import logging
from dataclasses import dataclass, field

from worker.trainer.environments.base import Environment, Episode
from worker.trainer.environments.rendering import ReplyTokens
from worker.trainer.environments.replies import messages_of
from worker.trainer.environments.tool_calls import parse_calls, stop_strings
from worker.trainer.rollout.groups import Completion, EpisodeRecord

log = logging.getLogger("worker.trainer")


@dataclass(frozen=True)
class EpisodeLimits:
    max_turns: int
    max_tool_calls: int
    max_turn_tokens: int
    max_episode_tokens: int
    max_context: int
    timeout_s: float

    @classmethod
    def of(cls, config) -> "EpisodeLimits":
        """The context is bounded by what the server holds (vllm_max_model_len): a request past it
        would be refused, so the episode ends there instead."""
        from worker.trainer.inference.launch import max_model_len

        context = min(config.max_episode_context or max_model_len(config), max_model_len(config))
        return cls(max_turns=config.max_turns, max_tool_calls=config.max_tool_calls,
                   max_turn_tokens=config.max_completion_length, max_episode_tokens=config.max_episode_tokens,
                   max_context=context, timeout_s=config.environment_timeout_s)


@dataclass
class _State:
    episode: Episode                  # the environment's side of it
    context: list[int]
    messages: list[dict]              # as the chat template renders them
    turns: list[dict]
    token_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    loss_mask: list[int] = field(default_factory=list)
    generated: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    assistant_turns: int = 0
    finish_reason: str = "stop"
    pending_calls: list = field(default_factory=list)  # the last assistant turn's calls, for the reply


class EpisodeSampler:
    """What the rollout worker asks of a group's sampler, for an environment: the group's G
    episodes of one prompt, played at once. The row's "prompt" holds the episode's first
    messages (the trainer's prompt source puts them there)."""

    def __init__(self, client, runner: "EpisodeRunner"):
        self.client, self.runner = client, runner

    async def sample(self, prompt_ids: list[int], n: int, columns: dict | None = None,
                     overrides: dict | None = None) -> list[Completion]:
        row = dict(columns or {})
        messages = row.get("prompt") or []
        return list(await asyncio.gather(*(self.runner.play(self.client, prompt_ids, messages, row)
                                           for _ in range(n))))

    async def close(self) -> None:
        await self.client.close()


def message_turn(message: dict, error: str = "") -> dict:
    return {"role": message["role"], "content": message["content"], "tool_calls": [], "trained": False,
            "model_version": None, "num_tokens": 0, "error": error}


# An environment that fails every episode would fill the run's log: the first few failures are
# logged, then one in so many, with the count.
LOGGED_FAILURES, THEN_ONE_IN = 10, 50


class EpisodeRunner:
    def __init__(self, environment: Environment, rendering: ReplyTokens, limits: EpisodeLimits,
                 tool_format: str, current_version, on_warning=None):
        self.environment, self.rendering, self.limits = environment, rendering, limits
        self.tool_format, self.current_version = tool_format, current_version
        self.on_warning = on_warning or log.warning
        self.failures = 0
        self.tool_names = [tool.name for tool in environment.tools]
        self.argument_names = {tool.name: tool.parameter for tool in environment.tools}
        self.stops = stop_strings(tool_format, self.tool_names)

    async def play(self, client, prompt_ids: list[int], messages: list[dict], row: dict) -> Completion:
        state = _State(episode=self.environment.episode(row), context=list(prompt_ids),
                       messages=[dict(m) for m in messages], turns=[message_turn(m) for m in messages])
        end = await self._turns(client, state)
        end, kept = await self._end(state, end)
        final = next((t["content"] for t in reversed(state.turns) if t["role"] == "assistant"), "")
        return Completion(token_ids=state.token_ids, logprobs=state.logprobs, text=final,
                          finish_reason=state.finish_reason, loss_mask=state.loss_mask,
                          episode=EpisodeRecord(turns=state.turns, end_reason=end, tool_calls=state.tool_calls,
                                                tool_errors=state.tool_errors, assistant_turns=state.assistant_turns,
                                                failed=end.startswith("environment_"), environment_state=kept))

    async def _end(self, state: _State, end: str) -> tuple[str, object]:
        """Tells the environment the episode is over: (how it ended, what the environment kept of it
        for its rubric). An environment that fails here fails the episode, as in a step."""
        failed = end.startswith("environment_")
        try:
            kept = await asyncio.wait_for(asyncio.to_thread(state.episode.end, end), self.limits.timeout_s)
        except TimeoutError:
            return end if failed else self._failed(state, "environment_timeout", "the environment did not end "
                                                   f"the episode within {self.limits.timeout_s:g} s"), None
        except Exception as exc:
            return end if failed else self._failed(state, "environment_error", f"{type(exc).__name__} as the "
                                                   f"episode ended: {exc}"), None
        return end, None if failed else kept

    async def _turns(self, client, state: _State) -> str:
        while True:
            if state.assistant_turns >= self.limits.max_turns:
                return "max_turns"
            budget = min(self.limits.max_turn_tokens, self.limits.max_episode_tokens - state.generated,
                         self.limits.max_context - len(state.context))
            if budget <= 0:
                return "max_tokens" if state.generated >= self.limits.max_episode_tokens else "context"
            await self._assistant_turn(client, state, budget)
            try:
                reply = await asyncio.wait_for(asyncio.to_thread(self._reply, state), self.limits.timeout_s)
            except TimeoutError:
                return self._failed(state, "environment_timeout",
                                    f"the environment did not answer within {self.limits.timeout_s:g} s")
            except Exception as exc:  # the environment's failure ends this episode only
                return self._failed(state, "environment_error", f"{type(exc).__name__}: {exc}")
            if reply is None:
                return "done"
            self._add_reply(state, reply)

    def _failed(self, state: _State, end: str, why: str) -> str:
        state.turns.append(message_turn({"role": "user", "content": ""}, error=why))
        self.failures += 1
        if self.failures <= LOGGED_FAILURES or self.failures % THEN_ONE_IN == 0:
            self.on_warning(f"an episode ended without a reward ({end}, failure {self.failures} of the run): {why}")
        return end

    async def _assistant_turn(self, client, state: _State, budget: int) -> None:
        version = self.current_version()
        overrides: dict[str, object] = {"max_tokens": budget}
        if self.stops:
            overrides.update(stop=self.stops, include_stop_str_in_output=True)
        completion, = await client.sample(state.context, 1, overrides=overrides)
        calls = parse_calls(completion.text, self.tool_format, self.tool_names, self.argument_names)
        state.context += completion.token_ids
        state.token_ids += completion.token_ids
        state.logprobs += completion.logprobs
        state.loss_mask += [1] * len(completion.token_ids)
        state.generated += len(completion.token_ids)
        state.assistant_turns += 1
        state.finish_reason = completion.finish_reason
        state.messages.append({"role": "assistant", "content": completion.text})
        state.turns.append({"role": "assistant", "content": completion.text,
                            "tool_calls": [c.as_message_call() for c in calls], "trained": True,
                            "model_version": version, "num_tokens": len(completion.token_ids), "error": ""})
        state.pending_calls = calls

    def _reply(self, state: _State) -> list[dict] | None:
        """The environment's answer to the last turn. Calls it cannot be given (malformed, over
        the limit) are answered here with an error, and counted; the rest go to the environment."""
        calls, answered, errors = state.pending_calls, [], []
        for call in calls:
            if call.error:
                errors.append({"role": "tool", "content": f"error: {call.error}"})
            elif state.tool_calls >= self.limits.max_tool_calls:
                errors.append({"role": "tool", "content": f"error: no more tool calls in this episode "
                                                          f"(max_tool_calls {self.limits.max_tool_calls})"})
            else:
                answered.append(call)
            state.tool_calls += 1
        conversation = [*state.messages[:-1], {**state.messages[-1], "tool_calls": [
            {**c.as_message_call(), "values": c.values} for c in answered]}]
        if calls and not answered:
            return errors
        reply = messages_of(state.episode.step(conversation))
        if reply is None and errors:
            return errors
        return None if reply is None else errors + reply

    def _add_reply(self, state: _State, reply: list[dict]) -> None:
        ids = self.rendering.reply_ids(state.context, state.messages, reply)
        state.context += ids
        state.token_ids += ids
        state.logprobs += [0.0] * len(ids)
        state.loss_mask += [0] * len(ids)
        for message in reply:
            failed = message["role"] == "tool" and message["content"].startswith("error:")
            state.tool_errors += failed
            state.turns.append({**message_turn(message, error=message["content"] if failed else ""),
                                "num_tokens": 0})
            state.messages.append({k: v for k, v in message.items() if k in ("role", "content", "name")})
        state.turns[-1]["num_tokens"] = len(ids)  # the reply's tokens, counted on its last message
