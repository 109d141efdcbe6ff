"""A stub OpenAI-compatible judge endpoint for tests: /v1/chat/completions behind a bearer key, in a
thread of the test's process. It scores by the word after "Answer: " in the question it is shown
(ANSWERS), ranks any question starting with "Rank" as 2, 1, 3, and keeps each request it accepted."""
import contextlib
import json
import threading
from http.server import ThreadingHTTPServer

from tests.support.json_handler import JsonHandler

KEY = "sk-stub-0123456789abcdef"
ANSWERS = {"good": '{"score": 8}', "bad": '{"score": 2}', "vague": "I would rather not say.",
           "html": "<b>bold</b> 7"}
RANKING = '{"ranking": [2, 1, 3]}'


class StubJudge(JsonHandler):
    seen: list[dict] = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.headers.get("Authorization") != f"Bearer {KEY}":
            return self.reply(401, {"error": {"message": "Incorrect API key provided"}})
        StubJudge.seen.append(body)
        asked = body["messages"][-1]["content"]
        answer = next((text for word, text in ANSWERS.items() if f"Answer: {word}" in asked), "OK")
        if asked.startswith("Rank"):
            answer = RANKING
        self.reply(200, {"id": "x", "object": "chat.completion", "model": body["model"],
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": answer}}],
                           "usage": {"prompt_tokens": 20, "completion_tokens": 3, "total_tokens": 23}})



@contextlib.contextmanager
def stub_judge():
    """The endpoint's base URL (ending in /v1) while it serves."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), StubJudge)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    StubJudge.seen = []
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
