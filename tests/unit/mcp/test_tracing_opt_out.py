"""worldkit's servers drop the SDK's OpenTelemetry middleware only when no tracer provider is installed."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.server._otel import OpenTelemetryMiddleware
from opentelemetry import trace

from worldkit.mcp.base import WorldkitMCPServer, tracing_installed


class _Provider(trace.TracerProvider):
    """A stand-in for an installed SDK provider (e.g. under `opentelemetry-instrument`)."""

    def get_tracer(self, *args: Any, **kwargs: Any) -> trace.Tracer:
        return trace.NoOpTracer()


def _has_tracing(server: WorldkitMCPServer) -> bool:
    return any(isinstance(m, OpenTelemetryMiddleware) for m in server._lowlevel_server.middleware)  # noqa: SLF001


def test_without_a_provider_the_idle_tracing_middleware_is_dropped() -> None:
    assert not tracing_installed()  # the test process installs none
    server = WorldkitMCPServer("plain", log_level="WARNING")
    assert not _has_tracing(server)
    assert server._lowlevel_server.middleware  # noqa: SLF001 - the SDK's other middleware stays


def test_with_a_provider_installed_spans_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: _Provider())
    assert tracing_installed()
    assert _has_tracing(WorldkitMCPServer("traced", log_level="WARNING"))
