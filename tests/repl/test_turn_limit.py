"""A model that keeps calling tools stops at the turn limit with a line a person can act on,
and everything it did is kept (it used to be Go's text for programs, with no hint:
``loop stage failed: runner: model turn limit exceeded after 10 turns``); and the conversation
can go on (the next prompt failed: "TrimHistory left no messages")."""

from __future__ import annotations

import json
import subprocess

from golem_cli.store import Store

from tests.providerserver import ProviderServer, Reply, Scenario, ToolCallSpec
from tests.repl.conftest import GOLEM, golem_env


def _keeps_calling(server: ProviderServer, turns: int) -> None:
    server.enqueue(*(Scenario(reply=Reply(tool_calls=[ToolCallSpec(f"call_{n}", "list_files", "{}")])) for n in range(turns)))


def test_the_turn_limit_is_worded_for_people_and_the_work_is_kept(home, server, tmp_path):
    _keeps_calling(server, 10)
    done = subprocess.run([GOLEM, "ask", "-T", "fs", "look around"], capture_output=True, text=True,
                          env=golem_env(home), timeout=60, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1
    line = done.stderr.splitlines()[-1]  # above it: each call as it ran
    assert line.startswith("golem: ") and "loop stage" not in line and "runner:" not in line, line
    assert "10 tool rounds in a row" in line and "continue" in line, line
    (info,) = Store(home).list()
    messages = Store(home).load(info.id)
    assert sum(1 for m in messages if m.role == "tool") == 10  # every call and its result saved
    again = subprocess.run([GOLEM, "ask", "-c", "--json", "continue"], capture_output=True, text=True,
                           env=golem_env(home), timeout=60, cwd=tmp_path)  # fmt: skip
    assert again.returncode == 0 and json.loads(again.stdout)["conversationId"] == info.id, again.stderr
    # the 20 newest messages are all calls and results, none can open a request (the reference's
    # trim fails every later prompt on that): the window reaches back to the prompt that began them
    sent = server.requests[-1].json["messages"]
    assert sent[0] == {"role": "user", "content": "look around"} and sent[-1]["content"] == "continue"
    assert len(sent) == 22
