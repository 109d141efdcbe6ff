"""A stand-in for the control plane's ingest endpoint, for tests of what reports to it."""
import json
import threading
from http.server import ThreadingHTTPServer

from tests.support.json_handler import JsonHandler


class StubControlPlane:
    """A local HTTP server that records batches, and can be told to fail or refuse."""

    def __init__(self):
        self.received: list[int] = []
        self.mode = "ok"  # ok | down (503) | refuse (400)
        self.cancel = False
        self.status = "running"
        self.max_body: int | None = None  # like INGEST_BATCH_MAX_MB: a larger batch is a 413
        self.batch_bytes: list[int] = []
        stub = self

        class Handler(JsonHandler):
            def do_POST(self):
                length = int(self.headers["Content-Length"])
                if stub.max_body is not None and length > stub.max_body:
                    return self.reply(413, {"detail": f"the body is {length} bytes; this route takes at most "
                                                       f"{stub.max_body} bytes (INGEST_BATCH_MAX_MB)"})
                body = json.loads(self.rfile.read(length))
                stub.batch_bytes.append(length)
                if stub.mode == "down":
                    return self.reply(503, {"detail": "restarting"})
                if stub.mode == "refuse":
                    return self.reply(400, {"detail": "nothing was stored"})
                stub.received += [event["seq"] for event in body["events"]]
                self.reply(200, {"stored": len(body["events"]), "duplicates": 0, "status": stub.status,
                                  "cancel_requested": stub.cancel})


        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/api/runs/1/events/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
