"""Asks vLLM's /v1/completions for one group: n samples of a prompt given as token ids."""
import asyncio

import httpx

from worker.trainer.inference.api_key_guard import bearer
from worker.trainer.inference.server_api import ServerUnreachable
from worker.trainer.rollout.groups import Completion


class ServerUnavailable(RuntimeError):
    """vLLM did not answer after every retry: the server is probably dead."""


def lost_its_server(error: BaseException) -> bool:
    """Whether `error`, or what caused it, is a vLLM server that no longer answers: rollouts that
    found none (ServerUnavailable), or a weight sync that reached none."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, (ServerUnavailable, ServerUnreachable)):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class CompletionsClient:
    def __init__(self, base_url: str, model_name: str, sampling: dict, timeout_s: float,
                 retries: int = 3, backoff_s: float = 1.0, transport: httpx.AsyncBaseTransport | None = None,
                 api_key: str | None = None):
        """`api_key`: the server's (LaunchSpec.inference_api_key), sent with every request."""
        self.model_name, self.sampling = model_name, sampling
        self.retries, self.backoff_s = retries, backoff_s
        self._http = httpx.AsyncClient(base_url=base_url.rstrip("/"), transport=transport, headers=bearer(api_key),
                                       timeout=httpx.Timeout(timeout_s, connect=10.0),
                                       limits=httpx.Limits(max_connections=None, max_keepalive_connections=512))

    def request_body(self, prompt_ids: list[int], n: int, overrides: dict | None = None) -> dict:
        return {
            "model": self.model_name, "prompt": prompt_ids, "n": n,
            "logprobs": 0,              # the sampled token's log-prob, nothing more
            "return_token_ids": True,   # train on exactly the tokens vLLM produced
            **self.sampling, **(overrides or {}),
        }

    async def sample(self, prompt_ids: list[int], n: int, columns: dict | None = None,
                     overrides: dict | None = None) -> list[Completion]:
        """`columns`: the dataset row, which one completion of a prompt does not need (an
        episode's sampler does); `overrides`: request fields for this call (a turn's budget)."""
        body = self.request_body(prompt_ids, n, overrides)
        last_error = ""
        for attempt in range(self.retries + 1):
            if attempt:
                await asyncio.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                response = await self._http.post("/v1/completions", json=body)
            except httpx.TransportError as exc:
                last_error = f"{type(exc).__name__}: {exc}"
                continue
            if response.status_code == 200:
                return parse_choices(response.json())
            last_error = f"HTTP {response.status_code}: {response.text[:300]}"
            if response.status_code < 500:
                raise ValueError(f"vLLM refused the request: {last_error}")
        raise ServerUnavailable(f"vLLM did not answer after {self.retries + 1} tries ({last_error})")

    async def close(self) -> None:
        await self._http.aclose()


def parse_choices(payload: dict) -> list[Completion]:
    completions = []
    for choice in sorted(payload["choices"], key=lambda c: c["index"]):
        token_ids = choice.get("token_ids") or []
        logprobs = (choice.get("logprobs") or {}).get("token_logprobs") or []
        if len(logprobs) != len(token_ids):
            raise ValueError(f"vLLM returned {len(token_ids)} tokens but {len(logprobs)} log-probs")
        completions.append(Completion(token_ids=token_ids, logprobs=[float(x) for x in logprobs],
                                      text=choice["text"], finish_reason=choice.get("finish_reason") or "stop"))
    return completions


def sampling_params(config) -> dict:
    """The config's generation knobs in vLLM's request vocabulary."""
    params = {"max_tokens": config.max_completion_length, "temperature": config.temperature,
              "top_p": config.top_p, "repetition_penalty": config.repetition_penalty}
    if config.top_k:
        params["top_k"] = config.top_k
    if config.min_p:
        params["min_p"] = config.min_p
    return params
