"""The HTTP session every resource's calls share: the token, the timeouts, and the one place an
answer other than 2xx becomes ApiError with the server's words."""
from typing import Any

import httpx

from client.credentials import check_url

Json = Any  # what the API answered, as json.loads gives it


class ApiError(Exception):
    """The API refused: `status` and the server's `body` (its message per field)."""

    def __init__(self, status: int, body: Json):
        self.status, self.body = status, body
        super().__init__(f"HTTP {status}: {describe_problem(body)}")


def describe_problem(body: Json) -> str:
    """`detail`, then each refused field with its messages, on one line."""
    if isinstance(body, dict):
        parts = [str(body["detail"])] if "detail" in body else []
        parts += [f"{field}: {' '.join(map(str, messages)) if isinstance(messages, list) else messages}"
                  for field, messages in body.items() if field != "detail"]
        return "; ".join(parts) or "no reason given"
    return str(body)[:500]


class Session:
    """One httpx client on `<url>/api/`, with the account's token."""

    def __init__(self, url: str, token: str, timeout_s: float = 30.0, transport: httpx.BaseTransport | None = None,
                 insecure: bool = False):
        check_url(url, insecure)  # raises CredentialsError before the token goes anywhere
        self.url = url.rstrip("/")
        self.http = httpx.Client(base_url=self.url + "/api/", timeout=timeout_s, transport=transport,
                                 headers={"Authorization": f"Token {token}", "Accept": "application/json"})

    def close(self) -> None:
        self.http.close()

    def _call(self, method: str, url: str, **kwargs: Any) -> Json:
        return answer_of(self.http.request(method, url, **kwargs))


def answer_of(answer: httpx.Response) -> Json:
    """The answer's JSON (or text); ApiError unless it is a success."""
    try:
        body = answer.json()
    except ValueError:
        body = answer.text
    if not answer.is_success:
        raise ApiError(answer.status_code, body)
    return body
