"""One client for OpenAI-compatible chat-completions endpoints, used by the agent and the judge.

Built on httpx (`httpx2`, the client the MCP SDK already brings). A 5xx, a 429 or a connection
failure is retried by tenacity's retry policy (exponential backoff from `backoff_s`, at least the
server's `Retry-After`); anything that still fails raises `EndpointError`
(exit 5) with a message naming the endpoint and the fix — never a traceback. The API key is sent
but never recorded: `describe()` gives what an execution record may carry.

This module never chooses which environment variables to read: who the endpoint is (agent or
judge) is the caller's choice, and `endpoint_from_options` reads only the variables its caller
names, so one can never pick up the other's settings by accident.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx2 as httpx

from worldkit.errors import EnvironmentProblem

__all__ = ["ChatEndpoint", "EndpointError", "endpoint_from_options"]

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class EndpointError(EnvironmentProblem):
    """A chat endpoint could not be reached or kept answering with an error (exit 5)."""

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts


def _check_url(base: str) -> None:
    """An http(s) URL with a host, or a UsageError (exit 2) before anything is staged or sent."""
    from urllib.parse import urlsplit

    from worldkit.errors import UsageError

    example = "use e.g. http://127.0.0.1:8080/v1"
    try:
        parts = urlsplit(base)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError as error:
        raise UsageError(f"endpoint URL {base!r} is not a valid URL ({error}); {example}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"endpoint URL {base!r} is not an http(s) URL with a host; {example}")


@dataclass(frozen=True)
class ChatEndpoint:
    """An OpenAI-compatible `/chat/completions` endpoint and the model asked there."""

    base_url: str
    model: str
    api_key: str = field(default="", repr=False)
    timeout_s: float = 120.0
    max_retries: int = 2
    """Further attempts after the first, for retryable failures only."""
    backoff_s: float = 1.0
    """Wait before the first retry; doubled before each further one."""
    transport: Any = field(default=None, repr=False, compare=False)
    """An httpx transport to use instead of the network (tests inject `MockTransport`)."""
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))
        _check_url(self.base_url)

    def describe(self) -> dict[str, Any]:
        """What a record may say about this endpoint (never the key)."""
        return {
            "base_url": self.base_url,
            "model": self.model,
            "timeout_s": self.timeout_s,
            "max_retries": self.max_retries,
            "backoff_s": self.backoff_s,
        }

    def complete(self, payload: dict[str, Any]) -> dict[str, Any]:
        """POST one chat completion and return the decoded reply (retrying what is worth it)."""
        from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_exponential

        url = f"{self.base_url}/chat/completions"
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

        def wait(state: RetryCallState) -> float:
            backoff = wait_exponential(multiplier=self.backoff_s, exp_base=2, min=0, max=float("inf"))(state)
            error = state.outcome.exception() if state.outcome is not None else None
            return max(backoff, error.retry_after if isinstance(error, _Retryable) else 0.0)

        retrying = Retrying(
            stop=stop_after_attempt(self.max_retries + 1), wait=wait, sleep=self.sleep,
            retry=retry_if_exception(lambda error: isinstance(error, _Retryable)), reraise=True,
        )  # fmt: skip
        with httpx.Client(timeout=self.timeout_s, transport=self.transport) as client:
            try:
                for attempt in retrying:
                    with attempt:
                        number = attempt.retry_state.attempt_number
                        try:
                            response = client.post(url, json=payload, headers=headers)
                        except httpx.TimeoutException:
                            raise _Retryable(f"did not answer within {self.timeout_s:g} s", None, 0.0, number) from None
                        except httpx.HTTPError as error:
                            problem = f"is unreachable ({type(error).__name__}: {error})"
                            raise _Retryable(problem, None, 0.0, number) from None
                        status = response.status_code
                        if status < 400:
                            return self._decode(response, url)
                        problem = f"answered HTTP {status}: {response.text[:300].strip()}"
                        if status not in RETRY_STATUSES:
                            raise EndpointError(self._message(problem, number), status=status, attempts=number)
                        raise _Retryable(problem, status, _retry_after(response), number)
            except _Retryable as last:
                raise EndpointError(self._message(last.problem, last.attempts), status=last.status,
                                    attempts=last.attempts) from None  # fmt: skip
        raise AssertionError("unreachable: tenacity either returns the reply or re-raises")

    def _message(self, problem: str, attempts: int) -> str:
        tries = f" (after {attempts} attempts)" if attempts > 1 else ""
        return (
            f"chat endpoint {self.base_url} (model {self.model}) {problem}{tries}; check that the server "
            "is running at that URL, the model name and the API key"
        )

    def _decode(self, response: Any, url: str) -> dict[str, Any]:
        try:
            data = response.json()
        except ValueError:
            raise EndpointError(
                f"chat endpoint {url} answered HTTP {response.status_code} with something that is not JSON "
                f"({response.text[:120]!r}); point --base-url at an OpenAI-compatible API (…/v1)"
            ) from None
        choices = data.get("choices") if isinstance(data, dict) else None
        if not choices or not isinstance(choices, list) or not isinstance(choices[0].get("message"), dict):
            raise EndpointError(
                f"chat endpoint {url} answered without `choices[0].message` ({str(data)[:200]}); "
                "point --base-url at an OpenAI-compatible chat-completions API"
            )
        return data


def endpoint_from_options(
    options: Mapping[str, Any],
    *,
    base_url_vars: Sequence[str],
    model_vars: Sequence[str],
    api_key_vars: Sequence[str],
    missing: str,
    max_retries: int = 2,
    environ: Mapping[str, str] | None = None,
) -> ChatEndpoint:
    """An endpoint from `options` (base_url, model, api_key, timeout_s, max_retries, backoff_s,
    transport), each unset one from the first set variable the caller names, in order.

    `missing` is the UsageError's message when no endpoint or model is found; `max_retries` the
    caller's default. `environ` defaults to the process environment.
    """
    env = os.environ if environ is None else environ

    def pick(key: str, names: Sequence[str]) -> str:
        return str(options.get(key) or next((env[name] for name in names if env.get(name)), ""))

    base, model = pick("base_url", base_url_vars), pick("model", model_vars)
    if not base or not model:
        from worldkit.errors import UsageError

        raise UsageError(missing)
    return ChatEndpoint(
        base_url=base,
        model=model,
        api_key=pick("api_key", api_key_vars),
        timeout_s=float(options.get("timeout_s") or 120.0),
        max_retries=int(options["max_retries"]) if options.get("max_retries") is not None else max_retries,
        backoff_s=float(options["backoff_s"]) if options.get("backoff_s") is not None else 1.0,
        transport=options.get("transport"),
    )


class _Retryable(Exception):
    """One failed attempt worth another (a timeout, no connection, a retryable status)."""

    def __init__(self, problem: str, status: int | None, retry_after: float, attempts: int) -> None:
        super().__init__(problem)
        self.problem, self.status, self.retry_after, self.attempts = problem, status, retry_after, attempts


def _retry_after(response: Any) -> float:
    """The server's `Retry-After` in seconds (capped at a minute), 0 when absent or a date."""
    try:
        return min(60.0, max(0.0, float(response.headers.get("retry-after", "0"))))
    except ValueError:
        return 0.0
