"""An episode's parts for the trainer's environment tests: a server that answers each turn from a
script, and episode limits small enough to reach."""
from worker.trainer.environments.episodes import EpisodeLimits
from worker.trainer.rollout.groups import Completion


class ScriptedServer:
    """Answers each turn with the next scripted text (ending the turn with the end-of-turn
    token, as a model that stops does), and keeps each request."""

    def __init__(self, tokenizer, texts, finish="stop"):
        self.tokenizer, self.texts, self.finish, self.requests = tokenizer, list(texts), finish, []

    async def sample(self, prompt_ids, n, columns=None, overrides=None):
        self.requests.append({"prompt": list(prompt_ids), **(overrides or {})})
        text = self.texts.pop(0)
        ids = self.tokenizer(text, add_special_tokens=False).input_ids
        if self.finish == "stop" and not text.endswith("</calculate>"):
            ids = ids + [self.tokenizer.convert_tokens_to_ids("<|im_end|>")]
        return [Completion(token_ids=ids, logprobs=[-0.5] * len(ids), text=text, finish_reason=self.finish)]


def limits(**changes):
    values = dict(max_turns=4, max_tool_calls=4, max_turn_tokens=64, max_episode_tokens=512, max_context=4096,
                  timeout_s=5.0)
    return EpisodeLimits(**{**values, **changes})
