"""`golem chat`, `resume` and `fork` on a pseudo-terminal against the loopback provider."""

from __future__ import annotations

import re

import pytest
from golem_cli.core.ids import is_uuid7
from golem_cli.core.messages import INTERRUPTED, Message, ToolCall, is_interrupted_reply
from golem_cli.store import Store

from tests.providerserver import Reply, Scenario

CID = re.compile(r"conversation ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")


def banner_cid(text: str) -> str:
    return CID.search(text).group(1)


def test_three_turns_are_all_stored_with_run_ids(spawn, home):
    chat = spawn("chat", env={"COLUMNS": "200"})  # wide enough for the footer's last field, the run
    chat.child.setwinsize(40, 200)
    cid = banner_cid(chat.prompt())
    runs = []
    for word in ("alpha", "beta", "gamma"):
        out = chat.say(f"say {word}")
        assert f"echo: say {word}" in out
        runs.append(re.search(r"run ([0-9a-f]{12})\b", out).group(1))  # the footer shows each ID's tail
    assert "golem resume" in chat.leave()
    history = Store(home).load(cid)
    assert [m.role for m in history] == ["user", "assistant"] * 3
    assert [m.run_id[-12:] for m in history] == [r for r in runs for _ in (0, 1)]
    assert len({m.run_id for m in history}) == 3 and all(is_uuid7(m.run_id) for m in history)
    assert {m.conversation_id for m in history} == {cid}
    assert history[5].content == "echo: say gamma"


def test_footer_counts_stored_and_sent_with_trimming(spawn, home):
    chat = spawn("chat", "--max-messages", "2")
    chat.prompt()
    chat.say("one")
    chat.say("two")
    out = chat.say("three")
    # 4 stored messages before the turn, trim keeps the newest 2, plus the prompt; the file
    # keeps all 6.
    assert "6 stored, 3 sent" in out
    chat.leave()


def test_ctrl_c_mid_stream_keeps_partial_reply_then_next_turn_works(shared_chat, server):
    long_text = " ".join(f"word{i}" for i in range(400))
    server.enqueue(Scenario(reply=Reply(text=long_text), delay=0.05))
    chat, home, cid = (taken := shared_chat()).chat, taken.home, taken.cid
    chat.child.sendline("tell me a long story")
    chat.expect("word1")
    chat.child.sendintr()
    out = chat.expect(r"\d+ stored, \d+ sent[^\n]*")
    assert "Interrupted: the partial reply is saved." in out
    chat.prompt()
    assert "echo: next please" in chat.say("next please")
    history = Store(home).load(cid)
    assert [m.role for m in history] == ["user", "assistant", "user", "assistant"]
    partial = history[1]
    assert is_interrupted_reply(partial)
    assert partial.content.startswith("word0 word1")
    assert len(partial.content) < len(long_text)
    assert partial.run_id == history[0].run_id


def test_429_then_success(shared_chat, server):
    server.enqueue(Scenario(status=429, retry_after="0"))
    chat = shared_chat().chat
    out = chat.say("are you there")
    assert "echo: are you there" in out
    assert "error" not in out.lower()
    assert [r.path for r in server.requests].count("/v1/chat/completions") == 2


def test_dropped_stream_prints_one_line_and_keeps_everything(shared_chat, server):
    server.enqueue(Scenario(reply=Reply(text="a reply that will be cut off in the middle"), cut_after_frames=2))
    chat, home, cid = (taken := shared_chat()).chat, taken.home, taken.cid
    out = chat.say("first question")
    assert "error:" in out and "The partial reply is saved, marked interrupted. /retry asks again." in out
    assert "Traceback" not in out and "Nothing is lost" not in out
    assert "echo: second question" in chat.say("second question")
    history = Store(home).load(cid)
    assert history[0].content == "first question"
    assert history[-1].content == "echo: second question"
    assert any(is_interrupted_reply(m) for m in history[:-1])


def test_provider_401_says_what_to_do(shared_chat, server):
    server.enqueue(Scenario(status=401))
    chat = shared_chat().chat
    out = chat.say("hello")
    assert re.search(r"error:.*401", out)
    assert "key" in out.lower()
    assert "sk-test" not in out


def damaged(home) -> str:
    store = Store(home)
    history = [
        Message(role="user", content="roll twice"),
        Message(role="assistant", tool_calls=[ToolCall("call-1", "roll", '{"sides":6}'), ToolCall("call-2", "roll", '{"sides":')]),
        Message(role="tool", content="4", tool_call_id="call-1", tool_name="roll"),
        Message(role="tool", content="orphaned", tool_call_id="ghost", tool_name="roll"),
    ]
    return store.create(history, model="local:echo")


def test_resume_repairs_and_reports(spawn, home):
    cid = damaged(home)
    chat = spawn("resume", cid[:8])
    out = chat.prompt()
    assert "Repaired this conversation" in out
    assert re.search(r"synthesized.*call-2", out, re.I)
    assert re.search(r"dropped.*ghost", out, re.I)
    assert re.search(r"truncated.*call-2", out, re.I)
    stored = Store(home).load(cid)
    assert [m.tool_call_id for m in stored if m.role == "tool"] == ["call-2", "call-1"]
    assert stored[2].content == INTERRUPTED
    assert "echo: go on" in chat.say("go on")
    chat.leave()
    assert Store(home).load(cid)[-1].content == "echo: go on"


def test_fork_records_lineage_and_continues(spawn, home):
    store = Store(home)
    parent = store.create([Message(role="user", content="a"), Message(role="assistant", content="b"),
                           Message(role="user", content="c"), Message(role="assistant", content="d")], model="local:echo")  # fmt: skip
    chat = spawn("fork", parent[:10], "--at", "2")
    out = chat.prompt()
    new = re.search(r"Forked \S+ into ([0-9a-f-]{36})", out).group(1)
    chat.say("after the fork")
    chat.leave()
    meta = store.meta(new)
    assert meta.parent == parent and meta.fork_at == 2
    assert [m.content for m in store.load(new)] == ["a", "b", "after the fork", "echo: after the fork"]
    assert len(store.load(parent)) == 4


def test_slash_fork_continues_in_a_copy(shared_chat):
    chat, home, first = (taken := shared_chat()).chat, taken.home, taken.cid
    chat.say("before")
    out = chat.command("/fork", "continuing in the fork")
    second = re.search(r"into ([0-9a-f-]{36})", out).group(1)
    chat.say("in the fork")
    store = Store(home)
    assert len(store.load(first)) == 2
    assert [m.content for m in store.load(second)][-2:] == ["in the fork", "echo: in the fork"]
    assert store.meta(second).parent == first


def test_offline_echo_with_no_configuration(spawn, home):
    (home / "config.toml").unlink()
    chat = spawn("chat")
    out = chat.prompt()
    assert "offline echo model" in out
    assert "OPENAI_API_KEY" in out
    assert "You said: hi" in chat.say("hi")
    chat.leave()


def test_the_setup_hint_wraps_at_words(spawn, home):
    (home / "config.toml").unlink()
    chat = spawn("chat", env={"COLUMNS": "50"})
    chat.child.setwinsize(40, 50)
    chat.size = (40, 50)
    chat.prompt()
    screen = "\n".join(chat.screen())
    for word in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "provider:model"):
        assert word in screen  # whole on one screen line: never cut where the terminal ends
    chat.leave()


@pytest.mark.parametrize("columns", [80, 50])
def test_help_keeps_each_description_beside_or_under_its_command(spawn, columns):
    """At 80 columns a description's second line began at column 0, under the commands."""
    chat = spawn("chat", env={"COLUMNS": str(columns)})
    chat.child.setwinsize(150, columns)  # tall enough for the whole list at 50 columns
    chat.size = (150, columns)
    chat.prompt()
    chat.command("/help", "/exit")
    screen = chat.screen()
    start = max(i for i, line in enumerate(screen) if line.startswith("you> /help"))
    shown = screen[start + 1 : max(i for i, line in enumerate(screen) if line.startswith("you>"))]
    assert shown and all(line.startswith("  ") and len(line) <= columns for line in shown), shown
    said = " ".join(" ".join(shown).split())
    assert "/copy [FILE] copy the last reply (to the clipboard through the terminal, or to a new FILE)" in said
    chat.leave()


def test_slash_commands(spawn, home):
    chat = spawn("chat")
    cid = banner_cid(chat.prompt())
    out = chat.command("/help", "/exit")
    assert "/retry" in out and "/normalize" in out
    assert "/trim N [tokens]" in out and "/tools [enable|disable|allow NAME]" in out  # not eaten as markup
    chat.say("first")
    chat.command("/title My title", "Title set")
    chat.command("/system be brief", "System prompt set")
    out = chat.say("/retry")
    assert "previous reply is kept" in out and "echo: first" in out
    assert "Nothing to repair" in chat.command("/normalize", "Nothing to repair")
    assert "Unknown command /bogus" in chat.command("/bogus", "help lists them")
    chat.child.sendline("/exit")
    chat.child.expect("golem resume")
    store = Store(home)
    assert store.meta(cid).title == "My title"
    history = store.load(cid)
    assert history[0] == Message(role="system", content="be brief")
    assert [m.content for m in history[1:]] == ["first", "echo: first"]


def test_prompt_survives_the_process_being_killed_mid_reply(spawn, home, server):
    server.enqueue(Scenario(reply=Reply(text=" ".join(f"w{i}" for i in range(300))), delay=0.05))
    chat = spawn("chat")
    cid = banner_cid(chat.prompt())
    chat.child.sendline("a prompt worth keeping")
    chat.expect("w3")
    chat.child.kill(9)
    chat.child.wait()
    history = Store(home).load(cid)
    assert [m.content for m in history] == ["a prompt worth keeping"]
    assert history[0].run_id


def test_second_process_is_refused_with_the_holder_named(shared_chat):
    import subprocess

    from tests.repl.conftest import GOLEM, golem_env

    chat, home, cid = (taken := shared_chat()).chat, taken.home, taken.cid
    chat.say("mine")
    # named by its tail: the shared chat's other conversations, made within a minute, share its first characters
    done = subprocess.run([GOLEM, "ask", "--cid", cid[-12:], "theirs"], capture_output=True, text=True,
                          env=golem_env(home), timeout=30)  # fmt: skip
    assert done.returncode == 1
    assert "open in another golem process" in done.stderr and "golem fork" in done.stderr
    assert f"pid {chat.child.pid}" in done.stderr or str(chat.child.pid) in done.stderr
    chat.say("still mine")
    assert [m.content for m in Store(home).load(cid) if m.role == "user"] == ["mine", "still mine"]


def test_resume_without_id_offers_a_picker(spawn, home):
    store = Store(home)
    older = store.create([Message(role="user", content="older one")], model="local:echo")
    newer = store.create([Message(role="user", content="newer one")], model="local:echo")
    chat = spawn("resume")
    chat.expect("Resume which")
    chat.child.sendline("2")
    out = chat.prompt()
    assert older in out and newer not in out.split("Resume which")[-1]
    chat.say("continuing")
    chat.leave()
    assert store.load(older)[-1].content == "echo: continuing"


def test_stream_cut_inside_tool_arguments_is_kept_and_the_chat_goes_on(shared_chat, server):
    from tests.providerserver import ToolCallSpec

    server.enqueue(Scenario(reply=Reply(tool_calls=[ToolCallSpec("call_1", "roll", '{"sides": 20, "note": "cut"}')]),
                            cut_in_tool_args=True))  # fmt: skip
    chat, home, cid = (taken := shared_chat()).chat, taken.home, taken.cid
    out = chat.say("roll a die")
    assert "error:" in out and "Traceback" not in out
    assert "echo: and now" in chat.say("and now")
    history = Store(home).load(cid)
    cut = history[1]
    assert cut.role == "assistant" and cut.tool_calls[0].id == "call_1"
    assert cut.tool_calls[0].args.startswith('{"sides"') and not cut.tool_calls[0].args.endswith("}")
    # The second request carried the call closed by repair, its cut arguments wrapped.
    sent = server.requests[-1].json["messages"]
    assert sent[1]["tool_calls"][0]["function"]["arguments"] == '{"truncated_args":' + __import__("json").dumps(cut.tool_calls[0].args) + "}"
    assert sent[2] == {"role": "tool", "content": INTERRUPTED, "tool_call_id": "call_1"}


def test_ctrl_c_at_the_prompt_clears_the_line(shared_chat):
    chat, home, cid = (taken := shared_chat()).chat, taken.home, taken.cid
    chat.child.send("never sent")
    chat.child.sendintr()
    assert "echo: kept" in chat.say("kept")
    assert [m.content for m in Store(home).load(cid)] == ["kept", "echo: kept"]


MARKDOWN_REPLY = "Some **bold** words and `code`."


def test_replies_render_as_markdown_on_a_terminal(shared_chat, server):
    server.enqueue(Scenario(reply=Reply(text=MARKDOWN_REPLY)))
    chat = shared_chat().chat
    out = chat.say("format something")
    assert "Some bold words and code." in out
    assert "**bold**" not in out


def test_no_markdown_prints_the_text_as_it_came(shared_chat, server):
    server.enqueue(Scenario(reply=Reply(text=MARKDOWN_REPLY)))
    chat = shared_chat("--no-markdown").chat
    assert MARKDOWN_REPLY in chat.say("format something")


def test_no_color_is_honoured(spawn):
    colour = re.compile(r"\x1b\[[0-9;]*3[0-7]m")  # a foreground colour
    assert colour.search(spawn("chat").expect_raw("you>"))
    raw = spawn("chat", env={"NO_COLOR": "1"}).expect_raw("you>")
    banner = raw.split("you>")[0]
    assert "conversation" in banner and not colour.search(banner)


def test_leaving_a_new_chat_without_a_prompt_keeps_nothing(spawn, home):
    chat = spawn("chat", "--system", "be brief")
    chat.prompt()
    assert "Nothing said, nothing saved." in chat.leave()
    assert Store(home).list() == []
    chat = spawn("chat")
    chat.prompt()
    chat.say("one prompt")
    assert "golem resume" in chat.leave()
    assert len(Store(home).list()) == 1


def test_attach_goes_with_the_next_prompt_and_retry_resends_it(shared_chat, server, tmp_path):
    image = tmp_path / "cat.png"
    image.write_bytes(bytes.fromhex("89504e470d0a1a0a"))
    chat, home, cid = (taken := shared_chat()).chat, taken.home, taken.cid
    assert "Attached image (image/png" in chat.command(f"/attach {image}", "next prompt")
    chat.say("look")
    assert server.requests[-1].json["messages"][-1]["content"][1]["type"] == "image_url"
    chat.say("/retry")
    assert server.requests[-1].json["messages"][-1]["content"][1]["type"] == "image_url"
    chat.say("no picture now")
    assert server.requests[-1].json["messages"][-1]["content"] == "no picture now"
    prompts = [m for m in Store(home).load(cid) if m.role == "user"]
    assert [len(m.parts) for m in prompts] == [1, 0]


def test_resume_after_a_crash_takes_over_the_lock_and_says_so(spawn, home):
    chat = spawn("chat")
    cid = banner_cid(chat.prompt())
    chat.say("before the crash")
    pid = chat.child.pid
    chat.child.kill(9)
    chat.child.wait()
    again = spawn("resume", cid[:8])
    out = again.prompt()
    assert f"Took over the lock left by a golem process that is gone (pid {pid}" in out
    assert "echo: after" in again.say("after")
    again.leave()
    assert [m.content for m in Store(home).load(cid)][-2:] == ["after", "echo: after"]


def test_chat_over_the_anthropic_protocol(spawn, home, server):
    server.enqueue(Scenario(reply=Reply(text="thought through", thinking="let me think", signature="sig-1")))
    chat = spawn("chat", "-m", "claude:claude-test", "--system", "be brief")
    cid = banner_cid(chat.prompt())
    assert "thought through" in chat.say("first")
    assert "echo: second" in chat.say("second")
    chat.leave()
    sent = server.requests[-1].json
    assert server.requests[-1].path == "/v1/messages" and sent["system"] == [{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}]
    # The signed thinking block was replayed before the text, as Anthropic requires.
    assert sent["messages"][1]["content"][0] == {"type": "thinking", "thinking": "let me think", "signature": "sig-1"}
    history = Store(home).load(cid)
    assert history[2].thinking[0].signature == "sig-1"


def test_input_history_persists_and_is_private(spawn, home):
    chat = spawn("chat")
    chat.prompt()
    chat.say("remember this prompt")
    chat.leave()
    history_file = home / "input_history"
    assert "remember this prompt" in history_file.read_text()
    assert history_file.stat().st_mode & 0o777 == 0o600
    chat = spawn("chat")
    chat.prompt()
    chat.child.send("\x1b[A")  # Up: the previous session's prompt comes back
    chat.expect("remember this prompt")
    chat.child.sendline("")
    chat.expect(r"\d+ stored")
    chat.prompt()
    chat.leave()


def test_repeated_ctrl_c_stops_the_reply_once_and_the_chat_goes_on(shared_chat, server):
    server.enqueue(Scenario(reply=Reply(text=" ".join(f"word{i}" for i in range(400))), delay=0.05))
    chat, home, cid = (taken := shared_chat()).chat, taken.home, taken.cid
    chat.child.sendline("long story")
    chat.expect("word1")
    for _ in range(3):
        chat.child.sendintr()
    out = chat.expect(r"\d+ stored, \d+ sent[^\n]*")
    assert "Traceback" not in out and "Interrupted" in out
    chat.prompt()
    assert "echo: still here" in chat.say("still here")
    assert Store(home).load(cid)[-1].content == "echo: still here"


def test_ctrl_r_searches_earlier_prompts(shared_chat):
    chat = shared_chat().chat
    chat.say("the walrus said")
    chat.say("something else")
    chat.child.send("\x12")  # Ctrl-R
    chat.child.send("walr")
    chat.expect("reverse-i-search")
    chat.child.send("\r")  # accept the found line into the buffer
    chat.child.send("\r")  # and send it
    assert "echo: the walrus said" in chat.expect(r"\d+ stored, \d+ sent[^\n]*")
    chat.prompt()


def test_resume_when_the_conversations_model_is_not_available_here(spawn, home):
    cid = Store(home).create([Message(role="user", content="hi"), Message(role="assistant", content="hello")],
                             model="openai:gpt-4o")  # fmt: skip
    chat = spawn("resume", cid[:8])
    out = chat.prompt()
    assert "This conversation's model is not available" in out and "OPENAI_API_KEY" in out
    assert "model local:echo" in out
    assert "echo: go on" in chat.say("go on")
    chat.leave()
    assert Store(home).meta(cid).model == "local:echo"


def test_bracketed_text_in_errors_and_titles_is_printed_as_is(shared_chat):
    chat = shared_chat().chat
    out = chat.command("/model openai:gpt-4o", "error:")
    assert "[providers.openai]" in out  # the hint names the config table; rich must not eat it
    assert "Title set: [bold]x[/bold]" in chat.command("/title [bold]x[/bold]", "Title set")
    assert "echo: hi" in chat.say("hi"), "the model is still local:echo"


def test_resume_picker_left_without_a_choice(spawn, home):
    Store(home).create([Message(role="user", content="something")], model="local:echo")
    chat = spawn("resume")
    chat.expect("Resume which")
    chat.child.sendeof()
    out = chat.leave()
    assert "nothing resumed" in out and "Traceback" not in out and "internal error" not in out
    assert chat.child.exitstatus == 0


def test_a_cut_off_reply_and_a_refusal_are_named_in_the_chat(shared_chat, server):
    server.enqueue(Scenario(reply=Reply(text="Once upon a", finish="length")), Scenario(reply=Reply(refusal="No.")))
    chat = shared_chat("--no-markdown").chat
    out = chat.say("a long story")
    assert "Once upon a" in out and "cut off: the model reached its output token limit (length)" in out
    assert "refused" in chat.say("something bad")


def test_option_and_trim_tokens_in_the_chat(spawn, server):
    chat = spawn("chat", "-o", "temperature", "0.3")
    chat.prompt()
    assert "temperature = 0.3" in chat.command("/option", "Usage: /option")
    assert "max_tokens = 50" in chat.command("/option max_tokens 50", "Options for this chat")
    assert "is not a whole number" in chat.command("/option max_tokens lots", "whole number")
    chat.say("hello")
    body = server.requests[-1].json
    assert (body["temperature"], body["max_tokens"]) == (0.3, 50)
    assert "none" in chat.command("/option clear", "cleared") + chat.command("/option", "Usage")
    assert "about 500 tokens" in chat.command("/trim 500 tokens", "tokens of history")
    assert "now 500 tokens" in chat.command("/trim", "Usage: /trim")
    chat.say("again")
    assert "temperature" not in server.requests[-1].json
    sent = len(server.requests)
    chat.command("/trim 1 tokens", "tokens of history")
    chat.child.sendline("one turn over the budget")
    out = chat.expect("/retry sends it again") + chat.prompt()
    assert "newest turn of this conversation alone is about" in out and "more than the context budget of 1 tokens" in out
    assert "Traceback" not in out and "your prompt is saved" in out
    assert len(server.requests) == sent  # nothing sent; the chat goes on under a budget that fits
    chat.command("/trim 500 tokens", "tokens of history")
    assert "echo: fits again" in chat.say("fits again")
    chat.leave()


def test_a_provider_error_says_whether_any_of_the_reply_arrived(spawn, home, server):
    """Anthropic's overloaded_error as the stream's first event on every attempt: nothing
    arrived, and the chat says so (not "what arrived is kept"); the same event after some text
    keeps that text, and the chat says that."""
    from tests.repl.test_odd_servers import ANTHROPIC_START, FIRST_EVENT_ERRORS, OVERLOADED, TEXT, events

    chat = spawn("chat", "-m", "claude:claude-test")
    cid = banner_cid(chat.prompt())
    server.enqueue(*FIRST_EVENT_ERRORS["anthropic"])
    out = " ".join(chat.say("first").split())  # the error line wraps
    assert "reported an error: Overloaded (after 4 attempts)" in out
    assert "Nothing of the reply arrived; your prompt is saved. /retry sends it again." in out
    assert "kept" not in out and "mid-reply" not in out and "partial" not in out
    server.enqueue(Scenario(sse=events(ANTHROPIC_START, *TEXT, OVERLOADED)))
    out = " ".join(chat.say("second").split())
    assert "The answer begins" in out and "reported an error mid-reply: Overloaded" in out
    assert "The partial reply is saved, marked interrupted. /retry asks again." in out and "Nothing" not in out
    chat.leave()
    assert [m.content for m in Store(home).load(cid)] == ["first", "second", "The answer begins\n\n[reply interrupted]"]


def test_resume_and_fork_take_model_options_as_chat_does(spawn, golem_main, home, server):
    """-o on resume and fork: the same checks as chat and ask, before anything is opened or
    copied, and the options are the chat's, as /option shows and changes them."""
    store = Store(home)
    cid = store.create([Message("user", "hi"), Message("assistant", "echo: hi")], model="local:echo")
    chat = spawn("resume", cid[-6:], "-o", "temperature", "0.3", "--option", "stop", "END")
    chat.prompt()
    assert "temperature = 0.3" in chat.command("/option", "Usage: /option")
    chat.say("again")
    assert (server.requests[-1].json["temperature"], server.requests[-1].json["stop"]) == (0.3, ["END"])
    chat.command("/option temperature", "Options for this chat")  # unset, as in a chat
    chat.say("and again")
    assert "temperature" not in server.requests[-1].json and server.requests[-1].json["stop"] == ["END"]
    chat.leave()
    forked = spawn("fork", cid, "--at", "1", "-o", "max_tokens=50")  # the NAME=VALUE spelling
    new = re.search(r"into ([0-9a-f-]{36})", forked.prompt()).group(1)
    forked.say("in the copy")
    assert server.requests[-1].json["max_tokens"] == 50
    forked.leave()
    assert [m.content for m in store.load(new)] == ["hi", "in the copy", "echo: in the copy"]
    conversations = {row.id for row in store.list()}
    for args in (["resume", cid, "-o", "temperature", "hot"], ["fork", cid, "-o", "seed", "1", "-m", "claude:claude-test"],
                 ["resume", cid, "-o", "colour", "red"], ["fork", cid, "--no-chat", "-o", "temperature", "0.2"]):  # fmt: skip
        done = golem_main(*args, env={"COLUMNS": "120"})  # refused before a chat would start
        lines = done.err.strip().splitlines()
        assert done.code != 0 and len(lines) == 1 and lines[0].startswith("golem: "), (args, done.err)
        assert "Traceback" not in done.err and done.out == ""
    assert {row.id for row in store.list()} == conversations  # no fork left behind
    assert store.load(cid)[-1].content == "echo: and again"


def test_attach_a_text_file_in_the_chat(shared_chat, server, tmp_path):
    (tmp_path / "todo.md").write_text("- write tests\n")
    chat = shared_chat("--no-markdown").chat
    assert "todo.md (text" in chat.command(f"/attach {tmp_path / 'todo.md'}", "to your next prompt")
    chat.say("what is left?")
    assert server.requests[-1].json["messages"][-1]["content"] == 'what is left?\n\n<file name="todo.md">\n- write tests\n</file>'


def test_ctrl_c_during_a_flood_stops_and_saves_and_the_chat_goes_on(shared_chat, server):
    """A server that never stops sending, drawn as markdown: Ctrl-C still gets through at once
    (benchmarks/hostile_server.py measures how soon) and the partial reply is saved."""
    server.enqueue(Scenario(hostile="flood"))
    chat, home, cid = (taken := shared_chat()).chat, taken.home, taken.cid
    chat.child.sendline("flood me")
    chat.expect("All work")
    chat.child.sendintr()
    out = chat.expect(r"\d+ stored, \d+ sent[^\n]*", timeout=60)
    assert "Interrupted: the partial reply is saved." in out
    assert is_interrupted_reply(Store(home).load(cid)[1])
    chat.prompt()
    assert "echo: still here?" in chat.say("still here?")
