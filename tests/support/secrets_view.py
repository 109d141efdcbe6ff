"""The control plane's secrets view (runs/training_runs/views/run_secrets.py) as a local HTTP server, for a
trainer that fetches its judges' keys: it answers these keys to every GET and records the
Authorization header each request carried."""
import threading
from http.server import ThreadingHTTPServer

from tests.support.json_handler import JsonHandler


class SecretsView:
    def __init__(self, keys: dict[str, str]):
        self.seen: list[str | None] = []
        seen = self.seen

        class Handler(JsonHandler):
            def do_GET(self):
                seen.append(self.headers.get("Authorization"))
                self.reply(200, {"api_keys": keys})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/api/runs/1/secrets/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def __enter__(self) -> "SecretsView":
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
