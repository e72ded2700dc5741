"""What every test folder shares: the hypothesis profiles, each test's own GOLEM_HOME, and one
loopback provider server per test process (each pytest-xdist worker starts its own)."""

from __future__ import annotations

import compileall
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import golem_cli
import pytest
from hypothesis import HealthCheck, settings

from tests.providerserver import ProviderServer

# The profile the suite runs with is chosen in pyproject.toml (addopts: --hypothesis-profile);
# ``--hypothesis-profile=thorough`` runs the same properties ten times as deep. Neither has a
# deadline or the too-slow health check: both time each example on the wall clock, which a
# busy machine stretches, and a property that fails because the machine is busy proves nothing.
settings.register_profile("golem", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", settings.get_profile("golem"), max_examples=1000)


def pytest_configure(config: pytest.Config) -> None:
    """Compile golem's modules once, before any test starts golem: the suite runs it as a
    program hundreds of times, and where Python writes no bytecode (PYTHONDONTWRITEBYTECODE)
    each run would compile every module it imports again. The controller does it; the
    pytest-xdist workers find it done."""
    if not hasattr(config, "workerinput"):
        compileall.compile_dir(Path(golem_cli.__file__).parent, quiet=1)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: a worker per core, and one more. A quarter of the suite's time is tests
    waiting (for a pty's output, a server, a timeout), which the extra worker fills."""
    return len(os.sched_getaffinity(0)) + 1


def _reaches_golem(name: str) -> bool:
    """Whether a variable changes what golem prints, which model or key it takes, or where:
    a developer's own setting must never change what a test sees or reach a real provider."""
    return (name.startswith(("GOLEM_", "OLLAMA")) or name.endswith(("_API_KEY", "_BASE_URL"))
            or name in ("FORCE_COLOR", "NO_COLOR", "COLUMNS", "LINES"))  # fmt: skip


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's GOLEM_HOME: ``tmp_path/home`` (golem creates it), set in the environment,
    which no longer holds any other variable golem reads (``_reaches_golem``)."""
    for name in [name for name in os.environ if _reaches_golem(name)]:
        monkeypatch.delenv(name)
    path = tmp_path / "home"
    monkeypatch.setenv("GOLEM_HOME", str(path))
    return path


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A loopback port that refuses connections: bound for the whole test and never listened
    on, so no other process (another test worker's server) can start listening there."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


@pytest.fixture
def golem_main(home: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``golem_main(*args, input=..., env=...)``: what ``golem`` does, as ``golem_cli.__main__.main``
    called in this process behind pipes, each call checked to leave the process as it found it
    (``tests/inprocess.py``). For a command's output, exit code and files; never for what is
    about the process itself (signals, locks between processes, crashes, a terminal, a hang)."""
    from tests.inprocess import Result, run_in_process

    def run(*args: str, input: str | bytes | None = None, env: dict[str, str] | None = None) -> Result:
        data = input.encode() if isinstance(input, str) else (input or b"")
        return run_in_process(monkeypatch, args, data, env or {})

    return run


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


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A pytest-xdist worker hands its count of validated bodies to the controller."""
    from tests.providerserver.sdk import COUNTS

    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["sdk_counts"] = dict(COUNTS)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """The controller adds up the workers' counts (a hook of pytest-xdist)."""
    from tests.providerserver.sdk import COUNTS

    COUNTS.update(getattr(node, "workeroutput", {}).get("sdk_counts", {}))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """How many request bodies were validated against the official SDKs' request types."""
    from tests.providerserver.sdk import COUNTS

    if COUNTS:
        detail = ", ".join(f"{name} {count}" for name, count in sorted(COUNTS.items()))
        terminalreporter.write_line(f"request bodies validated against the SDK request types: {sum(COUNTS.values())} ({detail})")
