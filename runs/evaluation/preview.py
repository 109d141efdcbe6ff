"""A prompt in one line: the question asked, not the chat template's system prompt before it."""
import re

# Where a user turn starts in the chat templates of the common families (ChatML, Llama 3, Gemma,
# Phi/Zephyr, Mistral); the run page's completions browser reads prompts the same way.
_USER_TURN = re.compile(r"<\|im_start\|>user|<\|start_header_id\|>user<\|end_header_id\|>|<start_of_turn>user"
                        r"|<\|user\|>|\[INST\]")
_SPECIAL_TOKEN = re.compile(r"<\|[^|>]*\|>|</?(?:start_of_turn|end_of_turn)>|\[/?INST\]")
PREVIEW_CHARS = 160


def prompt_preview(prompt: str, length: int = PREVIEW_CHARS) -> str:
    starts = [match.end() for match in _USER_TURN.finditer(prompt)]
    text = " ".join(_SPECIAL_TOKEN.sub(" ", prompt[starts[-1] if starts else 0:]).split())
    return text if len(text) <= length else text[:length - 1] + "…"
