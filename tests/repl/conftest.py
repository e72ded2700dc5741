"""The chat commands as a person meets them: the real ``golem`` program on a pseudo-terminal
(pexpect), talking to the loopback provider server over HTTP."""

from __future__ import annotations

import io
import os
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.providerserver import ProviderServer

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-B]|\x1b[=>]|\r")
GOLEM = shutil.which("golem", path=os.path.dirname(sys.executable)) or "golem"
# How long a wait for golem's output may take before the test fails. Generous: it costs nothing
# when the output comes, and a machine shared with other test runs can be slow for seconds.
PATIENCE = 60


def plain(text: str) -> str:
    return ANSI.sub("", text)


@pytest.fixture
def home(home: Path, server: ProviderServer) -> Path:
    """The test's GOLEM_HOME (tests/conftest.py), with a config.toml whose `local` (OpenAI) and
    `claude` (Anthropic) providers are the test server: the only providers a chat here reaches."""
    home.mkdir()
    configure(home, server)
    return home


def configure(home: Path, server: ProviderServer) -> None:
    """The config.toml of ``home`` above (and of the home of the shared chats below)."""
    (home / "config.toml").write_text(
        f'model = "local:echo"\n\n[providers.local]\nbase_url = "{server.openai_base_url}"\n'
        f'api_key = "sk-test"\nmax_retries = 2\n\n'
        f'[providers.claude]\ntype = "anthropic"\nbase_url = "{server.url}"\napi_key = "sk-test"\n'
    )


def golem_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith(("GOLEM_", "OLLAMA"))}
    env.update(GOLEM_HOME=str(home), PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm", COLUMNS="120", LINES="40")
    env.pop("NO_COLOR", None)
    return env


class Chat:
    """A running ``golem`` REPL and what it printed, without terminal escapes."""

    def __init__(self, child: pexpect.spawn) -> None:
        self.child = child
        self.size = child.getwinsize()
        self.log = io.StringIO()
        child.logfile_read = self.log
        self._emulator: tuple[io.StringIO, tuple[int, int], Any, Any] | None = None  # log, size, screen, stream
        self._fed = 0

    def screen(self) -> list[str]:
        """The terminal's lines as a person sees them now (a VT100 emulator replays
        everything the program wrote), trailing blanks removed. The emulator is fed only
        what was written since the last call (tests poll this while golem draws)."""
        import pyte

        if self._emulator is None or self._emulator[:2] != (self.log, self.size):  # a new log or size: replay all
            rows, columns = self.size
            screen = pyte.Screen(columns, rows)
            self._emulator, self._fed = (self.log, self.size, screen, pyte.Stream(screen)), 0
        _, _, screen, stream = self._emulator
        text = self.log.getvalue()
        stream.feed(text[self._fed :])
        self._fed = len(text)
        lines = [line.rstrip() for line in screen.display]
        while lines and not lines[-1]:
            lines.pop()
        return lines

    def expect(self, pattern: str, timeout: float = PATIENCE) -> str:
        return plain(self.expect_raw(pattern, timeout))

    def expect_raw(self, pattern: str, timeout: float = PATIENCE) -> str:
        """What was printed through ``pattern``, terminal escapes included."""
        self.child.expect(pattern, timeout=timeout)
        return self.child.before + self.child.after

    def prompt(self) -> str:
        return self.expect("you>")

    def turn(self) -> str:
        """What was printed through the end of a turn (its footer: "N stored, M sent ...")."""
        return self.expect(r"\d+ stored, \d+ sent[^\n]*")

    def say(self, text: str) -> str:
        """Send a prompt; return what was printed up to the next prompt (footer included)."""
        self.child.sendline(text)
        return self.turn() + self.prompt()

    def command(self, text: str, until: str) -> str:
        """Send a slash command; return what it printed through ``until`` and the next prompt
        (prompt-toolkit redraws the prompt while a line is typed, so the output is awaited)."""
        self.child.sendline(text)
        out = self.expect(until)
        return out + self.prompt()

    def leave(self) -> str:
        self.child.sendeof()
        self.child.expect(pexpect.EOF, timeout=PATIENCE)
        out = plain(self.child.before)
        self.child.close()
        return out


@pytest.fixture
def spawn(home: Path) -> Iterator:
    children: list[pexpect.spawn] = []

    def start(*args: str, env: dict[str, str] | None = None) -> Chat:
        child = pexpect.spawn(GOLEM, list(args), env=golem_env(home) | (env or {}), encoding="utf-8",
                              dimensions=(40, 120), timeout=PATIENCE)  # fmt: skip
        children.append(child)
        return Chat(child)

    yield start
    for child in children:
        if child.isalive():
            child.terminate(force=True)


@pytest.fixture
def demo_url() -> Iterator[str]:
    """The URL of a fresh demo tool server (tests/mcpservers/demo_app.py) served over HTTP from a
    thread of this process, for the tests whose server is not their subject: no server process,
    no second import of the MCP SDK."""
    from tests.mcpservers.threaded import http_demo

    with http_demo() as url:
        yield url


@pytest.fixture(scope="module")
def chat_pool(provider_server: ProviderServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    """The module's shared chats (tests/repl/shared_chat.py), in a GOLEM_HOME of its own."""
    from tests.repl.shared_chat import ChatPool

    home = tmp_path_factory.mktemp("shared") / "home"
    home.mkdir()
    configure(home, provider_server)
    pool = ChatPool(home=home)
    yield pool
    pool.end_all()


@pytest.fixture
def shared_chat(chat_pool: Any, server: ProviderServer, request: pytest.FixtureRequest) -> Iterator:
    """``shared_chat(*args)``: the module's ``golem chat *args`` at a new conversation. Takes
    ``server`` so the provider server is reset (no queued replies, no requests) before."""
    taken: list[tuple[str, ...]] = []
    failed_before = request.session.testsfailed

    def take(*args: str) -> Any:
        taken.append(args)
        return chat_pool.take(*args)

    yield take
    if request.session.testsfailed > failed_before:  # this test failed (its call report is in)
        for args in dict.fromkeys(taken):
            if args in chat_pool.chats:
                chat_pool.end(args)
