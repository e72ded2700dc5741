"""Rules for what may run, through the real ``golem chat`` against the loopback tool-calling
server (issue 24): allowed calls run without a question and still show what they do, denied
ones never run (deny wins, over --yes too), a compound command runs only when every part is
allowed, ``a`` adds a rule for the chat, ``/tools rules`` lists and ``/tools forget`` removes.
A chat where a question is answered runs on a terminal (``spawn``); one where no question
comes reads its prompts from its standard input, in this process (``golem_run``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.providerserver import ProviderServer
from tests.repl import inprocess_golem, test_tools
from tests.repl.test_tools import calls

pytestmark = pytest.mark.slow
project = test_tools.project  # the tool tests' fixture: the directory the tools work in
golem_run = inprocess_golem.golem_run  # golem's entry point in this process, its exit code checked


def command(cid: str, line: str):
    return calls((cid, "run_command", {"command": line}))


def test_allowed_denied_and_compound_commands(spawn, server: ProviderServer, project: Path):
    chat = spawn("chat", "-T", "shell", "--allow", "run_command(echo *)", "--allow", "run_command(touch a*)",
                 "--deny", "run_command(touch bad*)")  # fmt: skip
    chat.prompt()
    server.enqueue(command("c1", "echo one && touch a1"))
    out = chat.say("allowed")
    assert "wants to run" not in out and "✓ runs without asking: allow run_command(echo *)" in out
    assert "→ run_command  echo one && touch a1" in out and (project / "a1").exists()
    server.enqueue(command("c2", "echo two; touch bad1"))
    out = chat.say("denied")
    assert "wants to run" not in out and "← run_command denied" in out
    assert "the user's rule deny run_command(touch bad*) refuses it" in out and not (project / "bad1").exists()
    server.enqueue(command("c3", "echo three && touch other"))
    chat.child.sendline("not every part")
    shown = chat.expect(r"\[y\]es once")
    assert "$ echo three && touch other" in shown
    chat.child.sendline("n")
    chat.turn()
    chat.prompt()
    server.enqueue(command("c4", "echo `touch a2`"))  # backticks: no rule can allow it
    chat.child.sendline("unclassifiable")
    chat.expect(r"\[y\]es once")
    chat.child.sendline("n")
    chat.turn()
    chat.prompt()
    assert not (project / "other").exists() and not (project / "a2").exists()
    out = chat.command("/tools rules", r"/tools forget RULE removes one")
    assert "deny   run_command(touch bad*)" in out and "allow  run_command(echo *)" in out
    chat.leave()


def test_deny_wins_over_yes(golem_run, server: ProviderServer, project: Path):
    server.enqueue(command("c1", "echo x && touch made"))
    done = golem_run("chat", "-T", "shell", "--yes", "--deny", "run_command(touch *)", input="go\n")
    out = done.out + done.err
    assert "← run_command denied" in out and not (project / "made").exists()


def test_a_adds_a_prefix_rule_for_the_chat_and_forget_removes_it(spawn, server: ProviderServer, project: Path):
    chat = spawn("chat", "-T", "shell")
    chat.prompt()
    server.enqueue(command("c1", "touch one"))
    chat.child.sendline("first")
    chat.expect(r"\[y\]es once")
    chat.child.send("a")
    menu = chat.expect(r"Which\?")
    assert "1  this exact command  run_command(touch one)" in menu
    assert "2  commands starting touch  run_command(touch *)" in menu and "3  every run_command call" in menu
    chat.child.send("2")
    assert "Allowed for this chat: run_command(touch *)" in chat.turn()
    chat.prompt()
    server.enqueue(command("c2", "touch two"))
    out = chat.say("second")
    assert "wants to run" not in out and (project / "two").exists()
    chat.command("/tools forget run_command(touch *)", "Removed: run_command")
    server.enqueue(command("c3", "touch three"))
    chat.child.sendline("third")
    chat.expect(r"\[y\]es once")  # asked again
    chat.child.sendline("n")
    chat.turn()
    chat.prompt()
    chat.leave()
    assert not (project / "three").exists()


def test_rules_from_config_toml(golem_run, server: ProviderServer, home: Path, project: Path):
    config = home / "config.toml"
    config.write_text('allow = ["write_file(src/**)"]\ndeny = ["read_file(*.secret)"]\n' + config.read_text())
    (project / "src").mkdir()
    (project / "k.secret").write_text("s3cret")
    server.enqueue(calls(("w1", "write_file", {"path": "src/a.py", "content": "print(1)\n"}),
                         ("r1", "read_file", {"path": "k.secret"})))  # fmt: skip
    done = golem_run("chat", "-T", "fs", input="go\n")  # no terminal: a call not allowed is not asked about
    out = done.out + done.err
    assert "wants to run" not in out and (project / "src" / "a.py").exists()
    assert "✓ runs without asking: allow write_file(src/**)" in out and "+print(1)" in out  # the diff, still shown
    assert "s3cret" not in out and "← read_file denied" in out
