"""What a new user meets in the first hour (issue 12), on a pseudo-terminal."""

from __future__ import annotations

import re
import time

import pexpect
import pytest
from golem_cli.core.messages import is_interrupted_reply
from golem_cli.store import Store

from tests.providerserver import Reply, Scenario
from tests.repl.conftest import GOLEM, PATIENCE, golem_env, plain
from tests.repl.test_chat import banner_cid

FOOTER = r"\d+ stored, \d+ sent[^\n]*"


@pytest.mark.parametrize("model", ["local:echo", "claude:claude-test"])
def test_ctrl_c_with_markdown_shows_the_partial_reply_once(shared_chat, server, model):
    words = " ".join(f"w{i:03d}" for i in range(300))
    server.enqueue(Scenario(reply=Reply(text=f"First paragraph done.\n\n{words}"), delay=0.03))
    taken = shared_chat(*(() if model == "local:echo" else ("-m", model)))  # local:echo is the config's model
    chat, home, cid = taken.chat, taken.home, taken.cid  # its screen replays what came after /new
    chat.child.sendline("tell me a long story")
    chat.expect("w010")
    chat.child.sendintr()
    chat.expect(FOOTER)
    chat.prompt()
    screen = "\n".join(chat.screen())
    assert screen.count("First paragraph done.") == 1, screen
    assert screen.count("w001") == 1, screen
    assert is_interrupted_reply(Store(home).load(cid)[1])


def test_a_streamed_markdown_reply_is_shown_once(shared_chat, server):
    words = " ".join(f"w{i:03d}" for i in range(40))
    server.enqueue(Scenario(reply=Reply(text=f"First paragraph done.\n\n{words}"), delay=0.02))
    chat = shared_chat().chat  # its screen replays what came after /new: this reply alone
    chat.say("tell me a story")
    screen = "\n".join(chat.screen())
    assert screen.count("First paragraph done.") == 1, screen
    assert screen.count("w001") == 1, screen


def test_keys_typed_during_a_reply_reach_the_next_prompt(spawn, home, server):
    server.enqueue(Scenario(reply=Reply(text=" ".join(f"w{i:03d}" for i in range(60))), delay=0.03))
    chat = spawn("chat")
    cid = banner_cid(chat.prompt())
    chat.child.sendline("a slow one")
    chat.expect("w005")
    chat.child.send("typed ahead")
    chat.expect(FOOTER)
    chat.expect("typed ahead")
    assert chat.screen()[-1] == "you> typed ahead"
    chat.child.send("\r")
    chat.expect("echo: typed ahead")
    chat.expect(FOOTER)
    chat.prompt()
    chat.leave()
    assert [m.content for m in Store(home).load(cid)][-2:] == ["typed ahead", "echo: typed ahead"]
    assert "typed ahead" not in "\n".join(chat.screen()).split("w059")[0]  # not echoed into the reply


def test_ctrl_d_typed_while_the_reply_ends_leaves_the_chat(spawn, home, server):
    server.enqueue(Scenario(reply=Reply(text=" ".join(f"w{i:03d}" for i in range(30))), delay=0.03))
    chat = spawn("chat")
    chat.prompt()
    chat.child.sendline("a slow one")
    chat.expect("w003")
    chat.child.sendeof()
    chat.expect("golem resume")
    chat.child.expect(pexpect.EOF, timeout=PATIENCE)


def test_retry_after_a_failed_turn_makes_no_fork(shared_chat, server):
    server.enqueue(Scenario(status=401))
    chat, home, cid = (taken := shared_chat()).chat, taken.home, taken.cid
    store = Store(home)
    # the shared chat's earlier conversations (/new may have written this one's file already)
    before = {info.id for info in store.list()} - {cid}
    assert "error:" in chat.say("hello")
    out = chat.say("/retry")
    assert "echo: hello" in out and "kept in" not in out
    assert [info.id for info in store.list() if info.id not in before] == [cid]
    assert [m.content for m in store.load(cid)] == ["hello", "echo: hello"]


def test_retry_after_an_interrupted_reply_keeps_it_in_a_fork(shared_chat, server):
    server.enqueue(Scenario(reply=Reply(text="partial words here"), cut_after_frames=2))
    chat, home, cid = (taken := shared_chat()).chat, taken.home, taken.cid
    store = Store(home)
    before = {info.id for info in store.list()}  # the shared chat's earlier conversations
    chat.say("hello")
    out = chat.say("/retry")
    assert "previous reply is kept in conversation" in out and "echo: hello" in out
    (fork,) = [info.id for info in store.list() if info.id not in before | {cid}]
    assert is_interrupted_reply(store.load(fork)[-1])


def test_a_conversation_with_only_cut_off_arguments_is_not_called_repaired(spawn, home):
    from golem_cli.core.messages import Message, ToolCall

    cid = Store(home).create([
        Message(role="user", content="roll"),
        Message(role="assistant", tool_calls=[ToolCall("call-1", "roll", '{"sides":')]),
        Message(role="tool", content="4", tool_call_id="call-1", tool_name="roll"),
        Message(role="assistant", content="you rolled 4"),
    ], model="local:echo")  # fmt: skip
    chat = spawn("resume", cid)
    out = chat.prompt()
    assert "Repaired" not in out and "Nothing to repair. Noted:" in out and "call-1 (roll)" in out
    out = chat.command("/normalize", "Noted:")
    assert "Repaired" not in out and "call-1 (roll)" in out
    chat.leave()


def test_the_report_above_the_prompt_wraps_at_words(spawn, home):
    """At 80 columns the report's line was left to the terminal: "... has arguments th" / "at are ..."."""
    from golem_cli.core.messages import Message, ToolCall

    cid = Store(home).create([
        Message(role="user", content="roll"),
        Message(role="assistant", tool_calls=[ToolCall("call-1", "roll", '{"sides":')]),
        Message(role="tool", content="4", tool_call_id="call-1", tool_name="roll"),
    ], model="local:echo")  # fmt: skip
    chat = spawn("resume", cid, env={"COLUMNS": "60"})
    chat.child.setwinsize(40, 60)
    chat.size = (40, 60)
    chat.prompt()
    screen = chat.screen()
    start = next(i for i, line in enumerate(screen) if line.startswith("Nothing to repair. Noted:"))
    shown = screen[start + 1 : next(i for i, line in enumerate(screen) if line.startswith("you>"))]
    whole = ("truncated message 2 (assistant) call call-1 (roll) has arguments that are not one JSON object "
             "(cut off?); kept verbatim")  # fmt: skip
    assert " ".join(" ".join(shown).split()) == whole, shown
    assert len(shown) > 1 and all(line.startswith("    ") for line in shown[1:]), shown
    chat.leave()


def test_arguments_cut_off_by_golems_own_interruption_are_not_reported_on_resume(spawn, golem_main, home):
    """Ctrl-C mid-call left a reply marked interrupted whose call's arguments were cut; resume
    greeted that with "Nothing to repair. Noted: ... not one JSON object (cut off?)", a report
    for damage, about what the person did. /normalize, asked for, still notes it."""
    from golem_cli.core.messages import INTERRUPTED, Message, ToolCall, mark_interrupted

    cid = Store(home).create([
        Message(role="user", content="roll"),
        Message(role="assistant", content=mark_interrupted(""), tool_calls=[ToolCall("call-1", "roll", '{"sid')]),
        Message(role="tool", content=INTERRUPTED, tool_call_id="call-1", tool_name="roll"),
    ], model="local:echo")  # fmt: skip
    chat = spawn("resume", cid)
    out = chat.prompt()
    assert "Noted" not in out and "cut off" not in out and "Repaired" not in out, out
    out = chat.command("/normalize", "Noted:")
    assert "call-1 (roll)" in out
    chat.leave()
    done = golem_main("ask", "--cid", cid, "again", env={"COLUMNS": "120"})
    assert done.code == 0 and "Noted" not in done.err, done.err


def _sent_in_last_request(server) -> int:
    return len(server.requests[-1].json["messages"])


def test_footer_counts_agree_with_the_request_on_every_path(spawn, home, server):
    chat = spawn("chat", "--system", "be brief", "--max-messages", "2")
    cid = banner_cid(chat.prompt())
    out = chat.say("one")  # system + prompt went; system, prompt and reply are stored
    assert "3 stored, 2 sent" in out and _sent_in_last_request(server) == 2
    server.enqueue(Scenario(status=401))
    out = chat.say("two")  # the request was made and refused: it still carried 4
    assert "4 stored, 4 sent" in out and _sent_in_last_request(server) == 4
    server.enqueue(Scenario(reply=Reply(text="cut short here"), cut_after_frames=2))
    out = chat.say("three")  # the newest 2 ("echo: one", "two"), the system prompt and the prompt
    stored = len(Store(home).load(cid))
    assert f"{stored} stored, 4 sent" in out and _sent_in_last_request(server) == 4
    chat.leave()


def test_a_tool_turn_counts_what_its_last_request_carried(spawn, home, server, tmp_path):
    """A tool turn makes a request per round: the footer said "1 sent" (its first) for a turn
    whose last request carried the system prompt, the prompt, the call and its result."""
    from tests.providerserver import ToolCallSpec

    (tmp_path / "notes.txt").write_text("hello\n")
    home.joinpath("config.toml").write_text(f'tool_root = "{tmp_path}"\n' + home.joinpath("config.toml").read_text())
    server.enqueue(Scenario(reply=Reply(tool_calls=[ToolCallSpec("c1", "read_file", '{"path": "notes.txt"}')])))
    chat = spawn("chat", "-T", "fs", "--system", "be brief")
    chat.prompt()
    out = chat.say("read it")
    assert "tool results: c1" in out
    assert _sent_in_last_request(server) == 4 and "5 stored, 4 sent" in out, out
    chat.leave()


def test_the_banner_highlights_the_prefix_and_hints_print_the_tail(spawn, home):
    """The banner shows the whole ID, its unique prefix highlighted; the footer and the resume
    hint print its random tail, which a conversation made a moment later does not share."""
    from golem_cli.core.messages import Message

    store = Store(home)
    other = store.create([Message(role="user", content="made a moment before")])
    chat = spawn("chat")
    raw = chat.expect_raw("you>")
    cid = banner_cid(plain(raw))
    unique = store.unique_prefixes([cid])[cid]
    assert unique > 8 and other[:8] == cid[:8]  # made within a minute: the first 8 are shared
    assert f"\x1b[1;36m{cid[:unique]}\x1b[0m\x1b[2;36m{cid[unique:]}" in raw
    chat.child.sendline("hello")
    footer = chat.expect(FOOTER)
    assert f"conversation {cid[-12:]}" in footer and cid not in footer
    chat.prompt()
    out = chat.leave()
    typed = re.search(r"golem resume (\S+)", out).group(1)
    assert typed == cid[-12:] and store.resolve(typed) == cid
    store.create([Message(role="user", content="made a moment after")])
    assert store.resolve(typed) == cid


def test_resume_picker_asks_again_and_empty_leaves(spawn, home):
    from golem_cli.core.messages import Message

    store = Store(home)
    older = store.create([Message(role="user", content="older one")], model="local:echo")
    from golem_cli.core.ids import new_id

    # an ID ending in 9 must not be taken for the answer "9" (a list number out of range)
    store.create([Message(role="user", content="newer one")], model="local:echo", cid=new_id()[:-1] + "9")
    chat = spawn("resume")
    chat.expect("Resume which")
    chat.child.sendline("9")
    chat.expect("9 is not in the list")
    chat.expect("Resume which")
    chat.child.sendline("zzzz")
    chat.expect("not a conversation ID")
    chat.expect("Resume which")
    chat.child.sendline("2")
    assert older in chat.prompt()
    chat.leave()
    chat = spawn("resume")
    chat.expect("Resume which")
    chat.child.sendline("")
    assert "nothing resumed" in chat.leave()
    assert chat.child.exitstatus == 0


def test_a_locked_conversation_offers_a_fork(spawn, home):
    first = spawn("chat")
    cid = banner_cid(first.prompt())
    first.say("mine")
    second = spawn("resume", cid)
    second.expect(r"Fork it and continue in the copy\? \[y/N\]")
    second.child.sendline("y")
    out = second.prompt()
    new = re.search(r"Forked \S+ into ([0-9a-f-]{36})", out).group(1)
    second.say("in the copy")
    second.leave()
    first.leave()
    store = Store(home)
    assert store.meta(new).parent == cid
    assert [m.content for m in store.load(new)][-2:] == ["in the copy", "echo: in the copy"]
    assert [m.content for m in store.load(cid)] == ["mine", "echo: mine"]
    other_chat = spawn("chat")
    other = banner_cid(other_chat.prompt())  # another open conversation; no
    # A new chat's conversation is created and locked once a key typed at its prompt is shown
    # (ADR 0015): before that there is nothing to resume.
    other_chat.child.send("x")
    deadline = time.monotonic() + 20
    while Store(home).holder(other) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    refused = spawn("resume", other)
    refused.expect(r"\[y/N\]")
    refused.child.sendline("")
    assert "nothing resumed" in refused.leave()


def test_a_dropped_stream_says_kept_once(shared_chat, server):
    server.enqueue(Scenario(reply=Reply(text="a reply that will be cut off in the middle"), cut_after_frames=2))
    chat = shared_chat().chat
    out = chat.say("first question")
    said = out.split("error:")[1].split("\nrun ")[0]  # the error and the line after it, not the footer
    assert said.count("saved") == 1 and "The partial reply is saved" in said and "kept" not in said, said


def test_title_alone_shows_the_title_and_tools_has_a_legend(shared_chat):
    """``/title`` alone printed its usage; ``/tools`` had marks nobody explained, and said
    nothing when no tool was enabled."""
    chat = shared_chat().chat
    assert "No title yet. /title TEXT names it." in chat.command("/title", "names it")
    chat.say("what is a monad")
    assert 'listed as "what is a monad"' in chat.command("/title", "names it")
    chat.command("/title Monads", "Title set")
    assert "Title: Monads" in chat.command("/title", "Title: Monads")
    out = chat.command("/tools", "Nothing is enabled in this chat yet.")
    assert "* enabled here · runs: at once · asks: you approve each call · allowed: runs without asking" in out


def test_at_60_columns_the_banner_and_tool_previews_break_at_words(home, server, tmp_path):
    """The banner, the tools line and tool-result previews were cut by the terminal in the
    middle of words ("edit\\n_file", "logg\\ning"): each line now fits, broken between words,
    and a preview line too long for the screen ends in an ellipsis."""
    import pexpect

    from tests.providerserver import ToolCallSpec
    from tests.repl.conftest import Chat

    (tmp_path / "log.txt").write_text("the server started logging " + "x" * 30 + " and kept on going for a while\n")
    home.joinpath("config.toml").write_text(f'tool_root = "{tmp_path}"\n' + home.joinpath("config.toml").read_text())
    server.enqueue(Scenario(reply=Reply(tool_calls=[ToolCallSpec("c1", "read_file", '{"path": "log.txt"}')])))
    child = pexpect.spawn(GOLEM, ["chat", "-T", "fs"], env=golem_env(home) | {"COLUMNS": "60"}, encoding="utf-8",
                          dimensions=(40, 60), timeout=PATIENCE)  # fmt: skip
    try:
        chat = Chat(child)
        chat.prompt()
        banner = chat.screen()[:6]
        assert banner[:5] == ["golem 0.1.0 · model local:echo", banner[1], "/help for commands · Alt+Enter for a newline",
                              "Ctrl-C stops a reply · Ctrl-D exits", "tools: read_file, list_files, search_files, write_file,"]
        assert banner[5].startswith("edit_file in"), banner  # the path after it is longer than the screen: whole
        chat.child.sendline("read the log")
        chat.turn()
        chat.prompt()
        screen = chat.screen()
        (preview,) = [line for line in screen if line.startswith("    the server started")]
        assert len(preview) == 60 and preview.endswith("…"), screen
        assert not any(line.startswith("ing") for line in screen), screen
    finally:
        child.terminate(force=True)


def test_new_starts_a_new_conversation_without_leaving(spawn, home):
    chat = spawn("chat", "--system", "be brief")
    first = banner_cid(chat.prompt())
    assert "still empty" in chat.command("/new", "still empty")
    chat.say("in the first")
    out = chat.command("/new", "New conversation")
    assert f"golem resume {first[-12:]}" in out
    second = re.search(r"New conversation ([0-9a-f-]{36})\.", out).group(1)
    assert second != first
    chat.say("in the second")
    out = chat.leave()
    assert f"golem resume {second[-12:]}" in out
    store = Store(home)
    assert [m.content for m in store.load(first)] == ["be brief", "in the first", "echo: in the first"]
    assert [m.content for m in store.load(second)] == ["be brief", "in the second", "echo: in the second"]
    store.lock(first).release()  # neither is left held
    store.lock(second).release()


def test_copy_puts_the_last_reply_on_the_clipboard_or_in_a_file(shared_chat, tmp_path):
    import base64

    chat = shared_chat().chat
    assert "Nothing to copy yet" in chat.command("/copy", "Nothing to copy")
    chat.say("hello there")
    chat.child.sendline("/copy")
    raw = chat.expect_raw("Not every terminal accepts it")
    assert "\x1b]52;c;" + base64.b64encode(b"echo: hello there").decode() + "\x07" in raw
    chat.prompt()
    target = tmp_path / "reply.txt"
    assert "Wrote the last reply" in chat.command(f"/copy {target}", "Wrote the last reply")
    assert target.read_text() == "echo: hello there\n"
    assert "exists" in chat.command(f"/copy {target}", "only a new file")


def test_tab_completes_what_each_slash_command_takes(shared_chat, tmp_path):
    """As the shell completion does: paths after /attach, models after /model, tools after
    /tools enable, option names after /option."""
    (tmp_path / "notes-for-golem.txt").write_text("hello\n")
    chat = shared_chat().chat
    for typed, completed in [("/model local:e", "/model local:echo"), ("/option temp", "/option temperature"),
                             ("/tools enable sh", "/tools enable shell"),
                             (f"/attach {tmp_path}/notes-for", f"/attach {tmp_path}/notes-for-golem.txt")]:  # fmt: skip
        chat.child.send(typed)
        chat.child.send("\t")
        assert on_screen(chat, f"you> {completed}"), chat.screen()
        chat.child.sendcontrol("c")  # clears the line
        chat.prompt()


def on_screen(chat, line: str) -> bool:
    """Whether ``line`` shows on the screen within PATIENCE (what golem printed is awaited,
    a piece at a time: a completion is drawn among cursor moves, never as one string). Each
    wait takes all that arrived, so the screen is drawn once per piece, not once a character."""
    deadline = time.monotonic() + PATIENCE
    while line not in [row.strip() for row in chat.screen()]:
        if time.monotonic() > deadline:
            return False
        try:
            chat.child.expect(r"[\s\S]+", timeout=1)
        except pexpect.TIMEOUT:
            pass
    return True


def test_ctrl_x_ctrl_e_opens_the_prompt_in_the_editor(spawn, home, tmp_path):
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nprintf "written in the editor" > "$1"\n')
    editor.chmod(0o755)
    chat = spawn("chat", env={"EDITOR": str(editor), "VISUAL": str(editor)})
    chat.prompt()
    chat.child.send("typed first")
    chat.child.sendcontrol("x")
    chat.child.sendcontrol("e")
    assert on_screen(chat, "you> written in the editor"), chat.screen()
    chat.child.send("\r")
    assert "echo: written in the editor" in chat.turn()
    chat.leave()
