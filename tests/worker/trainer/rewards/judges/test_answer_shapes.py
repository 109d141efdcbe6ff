"""An answer whose content is not text (a list of parts, say) is an error of that completion, not an exception."""
import httpx

from worker.trainer.rewards.judges.client import read_answer


def test_content_that_is_not_text_is_an_answer_without_text():
    parts = [{"type": "text", "text": "7"}]
    reply = read_answer(httpx.Response(200, json={"choices": [{"message": {"content": parts}}]}), seconds=0.1)
    assert reply.raw is None
    assert reply.error.startswith("the answer has no text:")
