"""A stand-in for the Hugging Face Hub's HTTP API: just what a push with huggingface_hub 2.4.0's
`create_repo` and `upload_folder` asks of it, so that tests push through the real client code
and then look at what arrived.

- `POST /api/repos/create` makes `owner/name` (409 with its URL when it exists, as the Hub does;
  403 for an owner other than the token's user).
- `GET /api/models/<owner>/<name>` describes a repository (create_repo(exist_ok=True) asks after a 403).
- `POST /api/models/<owner>/<name>/preupload/<revision>` answers "regular" for every file, so the
  contents come inline in the commit and no LFS or Xet storage is needed.
- `POST /api/models/<owner>/<name>/commit/<revision>` takes the NDJSON commit: a header line, then a
  `file` line per file with its base64 content; the files are kept per repository.
- `POST /api/validate-yaml` accepts any model card.
Every request must carry `Authorization: Bearer <the token>`; another token gets the Hub's 401.
Anything else is recorded in `unknown` and answered 404, so a test notices a request it did not expect.
"""
import base64
import hashlib
import json
import logging
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from tests.support.asgi_server import free_port

logger = logging.getLogger(__name__)
REFUSED = "Invalid credentials in Authorization header"
REPO_PATH = re.compile(r"^/api/models/(?P<repo>[\w.-]+/[\w.-]+)"
                       r"(?:/(?P<verb>preupload|commit|revision)/(?P<rev>[^/]+))?$")


@dataclass
class Repo:
    private: bool
    files: dict[str, bytes] = field(default_factory=dict)
    commits: list[dict] = field(default_factory=list)  # each: oid, summary, description, paths


class HubServer:
    """`with HubServer(token="hf_good", user="tester") as hub:` then point HfApi at `hub.url`."""

    def __init__(self, token: str, user: str):
        self.token, self.user = token, user
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.repos: dict[str, Repo] = {}
        self.requests: list[tuple[str, str]] = []
        self.unknown: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), _handler_for(self))
        self._server.daemon_threads = True

    def __enter__(self) -> "HubServer":
        threading.Thread(target=self._server.serve_forever, name="fake-hub", daemon=True).start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()

    # --- what the handler calls, one method per endpoint: (status, JSON body, extra headers) -----
    def create_repo(self, body: dict):
        repo_id = f"{body.get('organization') or self.user}/{body['name']}"
        if repo_id.split("/")[0] != self.user:
            return 403, {"error": f'You don\'t have the rights to create a model under the namespace '
                                  f'"{repo_id.split("/")[0]}"'}, {}
        with self.lock:
            if repo_id in self.repos:
                return 409, {"error": "You already created this model repo", "url": f"{self.url}/{repo_id}"}, {}
            self.repos[repo_id] = Repo(private=body.get("visibility") == "private")
        return 200, {"url": f"{self.url}/{repo_id}", "name": repo_id}, {}

    def repo_info(self, repo_id: str):
        repo = self.repos.get(repo_id)
        if repo is None:
            return 404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"}
        sha = repo.commits[-1]["oid"] if repo.commits else "0" * 40
        return 200, {"id": repo_id, "sha": sha, "private": repo.private,
                     "siblings": [{"rfilename": path} for path in sorted(repo.files)]}, {}

    def preupload(self, repo_id: str, body: dict):
        if repo_id not in self.repos:
            return self.repo_info(repo_id)
        return 200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False, "oid": None}
                               for f in body["files"]]}, {}

    def commit(self, repo_id: str, ndjson: bytes):
        if repo_id not in self.repos:
            return self.repo_info(repo_id)
        lines = [json.loads(line) for line in ndjson.splitlines() if line.strip()]
        header = next(line["value"] for line in lines if line["key"] == "header")
        files = {line["value"]["path"]: base64.b64decode(line["value"]["content"])
                 for line in lines if line["key"] == "file"}
        if others := [line["key"] for line in lines if line["key"] not in ("header", "file")]:
            return 400, {"error": f"this stand-in takes inline files only, not {others}"}, {}
        oid = hashlib.sha1(ndjson).hexdigest()
        with self.lock:
            repo = self.repos[repo_id]
            repo.files.update(files)
            repo.commits.append({"oid": oid, "summary": header["summary"], "description": header["description"],
                                 "paths": sorted(files)})
        return 200, {"success": True, "commitOid": oid, "commitUrl": f"{self.url}/{repo_id}/commit/{oid}",
                     "hookOutput": ""}, {}


def _handler_for(hub: HubServer):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            self._answer(self._route("GET", b""))

        def do_POST(self):
            self._answer(self._route("POST", self._body()))

        def _route(self, method: str, body: bytes):
            path = urlsplit(self.path).path
            hub.requests.append((method, path))
            if self.headers.get("Authorization") != f"Bearer {hub.token}":
                return 401, {"error": REFUSED}, {"X-Error-Message": REFUSED}
            match = REPO_PATH.match(path)
            if method == "POST" and path == "/api/repos/create":
                return hub.create_repo(json.loads(body))
            if method == "POST" and path == "/api/validate-yaml":
                return 200, {"errors": [], "warnings": []}, {}
            if match and method == "GET" and match["verb"] in (None, "revision"):
                return hub.repo_info(match["repo"])
            if match and method == "POST" and match["verb"] == "preupload":
                return hub.preupload(match["repo"], json.loads(body))
            if match and method == "POST" and match["verb"] == "commit":
                return hub.commit(match["repo"], body)
            hub.unknown.append((method, path))
            logger.warning("the stand-in Hub does not know %s %s", method, path)
            return 404, {"error": f"the stand-in Hub does not know {method} {path}"}, {}

        def _body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                return self._chunked_body()
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _chunked_body(self) -> bytes:
            chunks = []
            while size := int(self.rfile.readline().split(b";")[0], 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()  # the CRLF after each chunk
            self.rfile.readline()
            return b"".join(chunks)

        def _answer(self, answer):
            status, body, headers = answer
            data = json.dumps(body).encode()
            self.send_response(status)
            for name, value in {"Content-Type": "application/json", **headers}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format, *args):  # the test's output stays quiet; `requests` has them
            pass

    return Handler
