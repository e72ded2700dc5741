"""Fixtures shared across the test layers: one loopback provider server per session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.providerserver import ProviderServer


@pytest.fixture(scope="session")
def provider_server() -> Iterator[ProviderServer]:
    """The OpenAI/Anthropic test server on 127.0.0.1, started once per test session."""
    server = ProviderServer().start_in_thread()
    yield server
    server.stop()


@pytest.fixture
def server(provider_server: ProviderServer, request: pytest.FixtureRequest) -> Iterator[ProviderServer]:
    """The test server with no queued faults and no recorded requests. A test fails if any body
    it sent was refused by the SDK request types (or, under a fault scenario, by the server's
    own rules), unless it is marked ``refused_bodies`` because it sends such bodies on purpose."""
    provider_server.reset()
    yield provider_server
    refused = list(provider_server.sdk_rejections)
    provider_server.reset()
    if request.node.get_closest_marker("refused_bodies") is None:
        assert refused == [], f"request bodies the real API would refuse: {refused}"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """How many request bodies were validated against the official SDKs' request types."""
    from tests.providerserver.sdk import COUNTS

    if COUNTS:
        detail = ", ".join(f"{name} {count}" for name, count in sorted(COUNTS.items()))
        terminalreporter.write_line(f"request bodies validated against the SDK request types: {sum(COUNTS.values())} ({detail})")
