"""A chat's settings come back with its conversation (issue 24 bug 3): the tools, the model
options, the trim and the system prompt's source, kept in the ``meta`` sidecar (never the
history file) and restored by ``resume``, ``fork`` and ``ask -c`` with one line saying which;
the command line's flags win over them, and they win over the config."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from golem_cli.store import Store
from golem_cli.store.meta import ChatSettings

from tests.providerserver import ProviderServer
from tests.repl import test_tools
from tests.repl.histories import write_conversation
from tests.repl.test_chat import banner_cid
from tests.repl.test_tools import calls

project = test_tools.project

pytestmark = pytest.mark.slow


def sent_tools(server: ProviderServer) -> list[str]:
    return sorted(t["function"]["name"] for t in server.requests[-1].json.get("tools", []))


#: What ``set_up_chat`` keeps beside the history (the first test checks that it is exactly this).
SET_UP = ChatSettings(tools=["fs"], off=["write_file"], options={"temperature": 0.3, "seed": 7}, max_messages=7,
                      trim_stride=2, system="/system")  # fmt: skip
SET_UP_HISTORY = [("system", "be brief"), ("user", "first"), ("assistant", "echo: first")]


def set_up_chat(spawn, server: ProviderServer) -> str:
    """A chat set up with -T fs, -o, /option, /trim and /system, one turn in it; its ID."""
    chat = spawn("chat", "-T", "fs", "-o", "temperature", "0.3")
    cid = banner_cid(chat.prompt())
    chat.command("/option seed 7", "Options for this chat")
    chat.command("/trim 7 stride 2", "Each run now sends")
    chat.command("/system be brief", "System prompt set")
    chat.command("/tools disable write_file", "Disabled")
    chat.say("first")
    assert server.requests[-1].json["temperature"] == 0.3 and server.requests[-1].json["seed"] == 7
    chat.leave()
    return cid


def set_up_written(home: Path) -> str:
    """What ``set_up_chat`` leaves, written as files (the other tests are about what comes back)."""
    (system, _), *turns = SET_UP_HISTORY
    return write_conversation(home, [text for role, text in turns if role == "user"], system=system, settings=SET_UP)


def test_resume_restores_what_the_chat_was_set_up_with_and_says_so(spawn, server: ProviderServer, home: Path, project):
    cid = set_up_chat(spawn, server)
    assert Store(home).meta(cid).settings == SET_UP
    assert [(m.role, m.content) for m in Store(home).load(cid)] == SET_UP_HISTORY
    history = (home / "conversations" / f"{cid}.json").read_text()
    assert "temperature" not in history and "read_file" not in history  # beside the history, not in it
    chat = spawn("resume", cid)
    banner = " ".join(chat.prompt().split())
    assert ("Restored this chat's settings: tools fs (off: write_file); temperature = 0.3, seed = 7; the newest 7 "
            "messages a run; cut in steps of 2; the system prompt (set by /system).") in banner  # fmt: skip
    server.enqueue(calls(("call_1", "read_file", {"path": "notes.txt"})))
    out = chat.say("read it")
    assert "tool results: call_1 hello" in out  # the model's call works: fs is enabled again
    first = server.requests[-2].json
    assert (first["temperature"], first["seed"]) == (0.3, 7)
    assert "read_file" in sent_tools(server) and "write_file" not in sent_tools(server)
    assert "now 7 messages, stride 2." in chat.command("/trim x", "Usage")
    chat.leave()


def test_flags_win_over_restored_settings(spawn, server: ProviderServer, home: Path, project):
    cid = set_up_written(home)
    chat = spawn("resume", cid, "-T", "web", "-o", "temperature", "0.9", "--max-messages", "30")
    banner = " ".join(chat.prompt().split())
    assert "Restored this chat's settings: seed = 7; cut in steps of 2; the system prompt (set by /system)." in banner
    chat.say("again")
    sent = server.requests[-1].json
    assert (sent["temperature"], sent["seed"]) == (0.9, 7)
    assert sent_tools(server) == ["fetch_url"]
    assert "now 30 messages, stride 2." in chat.command("/trim x", "Usage")
    chat.leave()


def test_ask_continue_and_fork_restore_them_too(spawn, golem_main, server: ProviderServer, home: Path, project):
    cid = set_up_written(home)
    done = golem_main("ask", "-c", "once more")
    assert done.code == 0, done.err
    assert "Restored this chat's settings: tools fs (off: write_file); temperature = 0.3, seed = 7" in done.err
    assert (server.requests[-1].json["temperature"], server.requests[-1].json["seed"]) == (0.3, 7)
    assert "read_file" in sent_tools(server)
    forked = spawn("fork", cid)
    banner = " ".join(forked.prompt().split())
    new = re.search(r"into ([0-9a-f-]{36})", banner).group(1)
    assert "Restored this chat's settings: tools fs" in banner
    forked.say("in the copy")
    assert server.requests[-1].json["temperature"] == 0.3 and "read_file" in sent_tools(server)
    forked.leave()
    assert Store(home).meta(new).settings == Store(home).meta(cid).settings


def test_restored_settings_win_over_the_config_and_follow_it_where_never_chosen(
    spawn, server: ProviderServer, home: Path
):
    chat = spawn("chat")
    cid = banner_cid(chat.prompt())
    chat.command("/trim 5", "Each run now sends")
    chat.say("hello")
    chat.leave()
    assert Store(home).meta(cid).settings == ChatSettings(max_messages=5)  # only what differs from the config
    config = home / "config.toml"
    config.write_text("max_messages = 9\n" + config.read_text())
    chat = spawn("resume", cid)
    assert "the newest 5 messages a run" in " ".join(chat.prompt().split())
    assert "now 5 messages" in chat.command("/trim x", "Usage")
    chat.leave()


def test_kept_values_golem_cannot_use_are_left_out_with_a_line(golem_main, server: ProviderServer, home: Path):
    store = Store(home)
    from golem_cli.core.messages import Message

    cid = store.create([Message("user", "hi"), Message("assistant", "echo: hi")], model="local:echo")
    store.set_settings(cid, ChatSettings(tools=["no_such_tool"], options={"temperature": "hot", "seed": 3},
                                         trim_stride=50))  # fmt: skip
    done = golem_main("ask", "--cid", cid, "go on")
    assert done.code == 0, done.err
    lines = done.err.splitlines()
    assert "Restored this chat's settings: seed = 3." in lines
    assert any(line.startswith("golem: left out the option temperature kept with this conversation:") for line in lines)
    assert any(line.startswith("golem: left out the tool no_such_tool kept with this conversation:") for line in lines)
    assert any(line.startswith("golem: left out the trim stride 50") for line in lines)
    assert "Traceback" not in done.err
    assert server.requests[-1].json["seed"] == 3 and "temperature" not in server.requests[-1].json
    assert json.loads(store.meta_path(cid).read_text())["settings"]["options"] == {"seed": 3}  # kept as now used


def test_rolling_summaries_turned_on_by_the_flag_come_back_with_the_conversation(
    golem_main, server: ProviderServer, home: Path
):
    from tests.repl.test_rolling_summaries import is_fold

    assert golem_main("ask", "--max-messages", "2", "--summarize-trimmed", "one").code == 0
    cid = Store(home).listing().conversations[0].id
    assert Store(home).meta(cid).settings == ChatSettings(max_messages=2, summarize_trimmed=True)
    for word in ("two", "three"):
        done = golem_main("ask", "--cid", cid, word)
        assert done.code == 0, done.err
        assert "Restored this chat's settings: the newest 2 messages a run; rolling summaries." in done.err
    assert any(is_fold(r) for r in server.requests)  # what left the window was folded: they are on
    assert list((home / "conversations").glob("*.summaries.json"))
