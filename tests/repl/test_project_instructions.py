"""Project instructions (issue 24): ``AGENTS.md`` (else ``CLAUDE.md``) from the tool root up
to the repository's root reach every request after the system prompt, outermost first, at
most 32 KB, listed in the banner, never written into the history file, and left out with
``--no-project-instructions`` or ``project_instructions = false``."""

from __future__ import annotations

from pathlib import Path

import pytest
from golem_cli.config.project import LIMIT, directories, read_instructions

from tests.providerserver import ProviderServer
from tests.repl import inprocess_golem
from tests.repl.test_tools import stored

pytestmark = pytest.mark.slow
golem_run = inprocess_golem.golem_run  # golem's entry point in this process, its exit code checked


@pytest.fixture
def repo(home: Path) -> Path:
    """A repository whose root has AGENTS.md and whose subdirectory (the tool root) has a
    CLAUDE.md only."""
    root = home / "repo"
    sub = root / "pkg"
    sub.mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "AGENTS.md").write_text("Use tabs.\n")
    (sub / "CLAUDE.md").write_text("Run make test.\n")
    (home.parent / "AGENTS.md").write_text("outside the repository: never read\n")
    config = home / "config.toml"
    config.write_text(f'tool_root = "{sub}"\n' + config.read_text())
    return root


def test_the_files_from_the_root_up_to_the_repository(repo: Path):
    assert directories(repo / "pkg") == [repo, repo / "pkg"]
    found = read_instructions(repo / "pkg")
    assert [p for p, _ in found.files] == [repo / "AGENTS.md", repo / "pkg" / "CLAUDE.md"]
    assert found.text.index("Use tabs.") < found.text.index("Run make test.") and "never read" not in found.text
    (repo / "pkg" / "AGENTS.md").write_text("x" * (LIMIT + 10))  # AGENTS.md wins over CLAUDE.md; cut at 32 KB
    found = read_instructions(repo / "pkg")
    assert found.cut and "Run make test." not in found.text and "cut at 32 KB" in found.text
    assert len(found.text.encode()) < LIMIT + 200


def test_outside_a_repository_the_tool_root_alone(tmp_path: Path):
    (tmp_path / "a").mkdir()
    assert directories(tmp_path / "a") == [(tmp_path / "a").resolve()]


def test_they_reach_the_request_after_the_system_prompt_and_never_the_history(
    spawn, server: ProviderServer, home: Path, repo: Path
):
    chat = spawn("chat", "-s", "Be brief.")
    banner = chat.prompt()
    assert "instructions: ../AGENTS.md (0.0 KB), CLAUDE.md (0.0 KB)" in banner
    chat.say("hello")
    chat.leave()
    system = server.requests[-1].json["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("Be brief.\n\n")
    assert "Use tabs." in system["content"] and "Run make test." in system["content"]
    history = stored(home)
    assert not any("Use tabs." in m.content for m in history)


def test_turned_off_by_the_flag_and_the_config(golem_run, server: ProviderServer, home: Path, repo: Path):
    """The chats read their prompts from standard input (in this process): the banner and the
    requests are what is checked, the terminal is the test above's."""
    assert "instructions:" in golem_run("chat", input="hello\n").out  # the banner lists them where they apply
    assert "Use tabs." in str(server.requests[-1].json["messages"])
    assert "instructions:" not in golem_run("chat", "--no-project-instructions", input="hello\n").out
    assert not any("Use tabs." in str(m) for m in server.requests[-1].json["messages"])
    config = home / "config.toml"
    config.write_text("project_instructions = false\n" + config.read_text())
    assert "instructions:" not in golem_run("chat", input="again\n").out
    assert not any("Use tabs." in str(m) for m in server.requests[-1].json["messages"])
