"""Conversation text through the model's chat template, and the tokens an environment's reply
adds after what the model sampled.

The context of an episode is the tokens vLLM produced and the tokens of each reply, never a
re-tokenisation of the whole conversation: the policy is trained on exactly what it sampled.
A reply's tokens are the chat template's text for it, after the context's own text; where the
template would not write the model's turn back as it was sampled (cut short, trimmed), the turn
is closed with the template's end of turn first.
"""
from typing import Protocol


class ReplyTokens(Protocol):
    """What an episode needs of a rendering: the tokens an environment's reply adds. A dry run's
    typed turns have none (runs/environments/dry_run.py)."""

    def reply_ids(self, context_ids: list[int], messages: list[dict], reply: list[dict]) -> list[int]: ...


class ChatRendering:
    def __init__(self, tokenizer, tools: list[dict] | None = None):
        self.tokenizer, self.tools = tokenizer, tools or None

    @property
    def takes_tools(self) -> bool:
        return "tools" in (getattr(self.tokenizer, "chat_template", None) or "")

    def text(self, messages: list[dict], generation_prompt: bool) -> str:
        if not getattr(self.tokenizer, "chat_template", None):
            text = "\n".join(f"{m['role']}: {m['content']}" for m in messages)
            return text + ("\nassistant: " if generation_prompt else "\n")
        extra = {"tools": self.tools} if self.tools and self.takes_tools else {}
        return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=generation_prompt,
                                                  **extra)

    def ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False).input_ids

    def reply_ids(self, context_ids: list[int], messages: list[dict], reply: list[dict]) -> list[int]:
        """The tokens that follow `context_ids` (ending with the model's last turn, which ends
        `messages`) when the environment answers `reply`, up to the next assistant turn's start."""
        said = self.tokenizer.decode(context_ids, skip_special_tokens=False)
        after = self.text(messages + reply, generation_prompt=True)
        if after.startswith(said):
            return self.ids(after[len(said):])
        before = self.text(messages, generation_prompt=False)
        if before.startswith(said):  # the turn was cut short: close it as the template does
            return self.ids(before[len(said):] + after[len(before):])
        end_of_turn = self.tokenizer.eos_token or ""
        return self.ids(end_of_turn + after[len(before):])
