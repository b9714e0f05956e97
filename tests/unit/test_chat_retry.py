"""The chat client's retry policy (tenacity): what is retried, how long it waits, what it reports."""

from __future__ import annotations

import httpx2 as httpx
import pytest

from worldkit.chat import ChatEndpoint, EndpointError, endpoint_from_options
from worldkit.errors import ExitCode, UsageError

OK = {"choices": [{"message": {"role": "assistant", "content": "hi"}}]}


def _endpoint(replies: list, waits: list[float], retries: int = 3) -> ChatEndpoint:
    calls = iter(replies)

    def answer(request: httpx.Request) -> httpx.Response:
        reply = next(calls)
        if isinstance(reply, Exception):
            raise reply
        return reply

    return ChatEndpoint("http://chat.test/v1", "m", max_retries=retries, backoff_s=0.5, sleep=waits.append,
                        transport=httpx.MockTransport(answer))  # fmt: skip


def test_retryable_failures_back_off_exponentially_then_succeed() -> None:
    waits: list[float] = []
    replies = [httpx.Response(503), httpx.ConnectError("refused"), httpx.Response(429), httpx.Response(200, json=OK)]
    assert _endpoint(replies, waits).complete({"messages": []}) == OK
    assert waits == [0.5, 1.0, 2.0]


def test_a_client_error_is_not_retried() -> None:
    waits: list[float] = []
    with pytest.raises(EndpointError) as caught:
        _endpoint([httpx.Response(401, text="bad key")], waits).complete({})
    assert waits == [] and caught.value.status == 401 and caught.value.attempts == 1
    assert "answered HTTP 401: bad key" in caught.value.message and caught.value.exit_code == ExitCode.ENVIRONMENT


def test_giving_up_names_the_last_problem_and_the_attempts() -> None:
    waits: list[float] = []
    with pytest.raises(EndpointError) as caught:
        _endpoint([httpx.Response(500, text="boom")] * 3, waits, retries=2).complete({})
    assert waits == [0.5, 1.0] and caught.value.attempts == 3 and caught.value.status == 500
    assert "answered HTTP 500: boom (after 3 attempts)" in caught.value.message


def test_an_endpoint_from_options_reads_only_the_variables_its_caller_names() -> None:
    environ = {"AGENT_URL": "http://127.0.0.1:1/v1", "AGENT_MODEL": "a", "JUDGE_KEY": "", "SECOND_KEY": "k2"}
    endpoint = endpoint_from_options(
        {"model": "from-options", "max_retries": None}, base_url_vars=["AGENT_URL"], model_vars=["AGENT_MODEL"],
        api_key_vars=["JUDGE_KEY", "SECOND_KEY"], missing="unused", max_retries=3, environ=environ,
    )  # fmt: skip
    assert (endpoint.base_url, endpoint.model, endpoint.api_key, endpoint.max_retries) == (
        "http://127.0.0.1:1/v1", "from-options", "k2", 3,
    )  # fmt: skip
    with pytest.raises(UsageError, match="^say which endpoint$"):
        endpoint_from_options({}, base_url_vars=["OTHER_URL"], model_vars=["AGENT_MODEL"], api_key_vars=[],
                              missing="say which endpoint", environ=environ)  # fmt: skip
