"""The project's ``.golem/config.toml`` (issue 24): its rules apply only once the person has
trusted the file, by its path and the hash of its bytes, and are asked about again when it
changes; ``a`` with ``p`` remembers a rule there (trusted as written)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.providerserver import ProviderServer
from tests.repl import test_tools
from tests.repl.test_tools import calls

pytestmark = pytest.mark.slow
project = test_tools.project  # the tool tests' fixture: the directory the tools work in


def command(cid: str, line: str):
    return calls((cid, "run_command", {"command": line}))


def chat_trusting(spawn, answer: str):
    chat = spawn("chat", "-T", "shell")
    chat.expect(r"Trust this file \(asked again when it changes\)\? \[y/N\]")
    chat.child.sendline(answer)
    chat.prompt()
    return chat


def test_rules_apply_only_once_trusted_and_a_change_asks_again(
    spawn, golem_main, server: ProviderServer, home: Path, project: Path
):
    rules = project / ".golem" / "config.toml"
    rules.parent.mkdir()
    rules.write_text('allow = ["run_command(touch ok*)"]\ndeny = ["run_command(touch no*)"]\n')
    chat = chat_trusting(spawn, "n")  # not trusted: the call is asked about
    server.enqueue(command("c1", "touch ok1"))
    chat.child.sendline("first")
    chat.expect(r"\[y\]es once")
    chat.child.sendline("n")
    chat.turn()
    chat.prompt()
    chat.leave()
    chat = chat_trusting(spawn, "y")  # asked again, trusted now
    server.enqueue(command("c2", "touch ok2"))
    out = chat.say("second")
    assert "wants to run" not in out and (project / "ok2").exists()
    server.enqueue(command("c3", "touch no1"))
    assert "← run_command denied" in chat.say("third") and not (project / "no1").exists()
    chat.leave()
    chat = spawn("chat", "-T", "shell")  # trusted as it is: not asked
    assert "Trust this file" not in chat.prompt()
    chat.leave()
    rules.write_text('allow = ["run_command(touch *)"]\n')  # changed: asked again; without a terminal, left out
    done = golem_main("ask", "-T", "shell", "go")  # its standard streams are not a terminal
    assert "is not trusted, its rules are left out" in done.err
    assert not (project / "ok1").exists()


def test_a_with_p_remembers_the_rule_for_the_project(spawn, server: ProviderServer, project: Path):
    chat = spawn("chat", "-T", "shell")
    chat.prompt()
    server.enqueue(command("c1", "touch kept"))
    chat.child.sendline("first")
    chat.expect(r"\[y\]es once")
    chat.child.send("a")
    chat.expect(r"Which\?")
    chat.child.sendline("2p")
    assert "Allowed for this chat and this project (.golem/config.toml): run_command(touch *)" in chat.turn()
    chat.prompt()
    chat.leave()
    assert (project / ".golem" / "config.toml").read_text() == 'allow = ["run_command(touch *)"]\n'
    chat = spawn("chat", "-T", "shell")  # golem wrote it, so it is trusted as written
    assert "Trust this file" not in chat.prompt()
    server.enqueue(command("c2", "touch again"))
    assert "wants to run" not in chat.say("second") and (project / "again").exists()
    chat.leave()
