"""`golem chat` shows its prompt first and opens the session right after (issue 13): the model
is checked and the conversation created once the prompt is drawn. Nothing may be lost or sent
to the wrong model on the way: an error is one line and the command's exit code, a prompt typed
at once waits for the session, Ctrl-D at once keeps nothing."""

from __future__ import annotations

import time

import pexpect
from golem_cli.store import Store

from tests.repl.conftest import PATIENCE, plain
from tests.repl.test_chat import banner_cid

FOOTER = r"\d+ stored, \d+ sent[^\n]*"


def _ended(chat) -> str:
    chat.child.expect(pexpect.EOF, timeout=PATIENCE)
    out = plain(chat.child.before)
    chat.child.close()
    return out


def _nothing_stored(home) -> bool:
    conversations = home / "conversations"
    return Store(home).list() == [] and not any(conversations.glob("*.json") if conversations.is_dir() else ())


def test_an_unknown_provider_is_one_line_once_the_prompt_is_shown(spawn, home, server):
    chat = spawn("chat", "-m", "nosuch:model")
    chat.prompt()
    out = _ended(chat)
    assert chat.child.exitstatus == 1
    lines = [line for line in out.splitlines() if line.startswith("golem:")]
    assert len(lines) == 1 and "unknown provider 'nosuch'" in lines[0], out
    assert "Traceback" not in out
    assert _nothing_stored(home) and server.requests == []


def test_a_prompt_typed_before_a_bad_provider_table_is_read_is_never_sent(spawn, home, server):
    config = home / "config.toml"
    config.write_text(config.read_text().replace("max_retries = 2\n", "max_retries = 2\ntemprature = 1\n", 1))
    chat = spawn("chat")
    chat.child.sendline("this must go nowhere")  # typed before the prompt is even drawn
    out = _ended(chat)
    assert chat.child.exitstatus == 1
    assert "unknown key 'temprature' in [providers.local]" in out and "Traceback" not in out
    assert server.requests == [] and _nothing_stored(home)


def test_an_option_the_model_refuses_ends_the_chat_with_one_line(spawn, home, server):
    chat = spawn("chat", "-o", "temperature", "hot")
    chat.prompt()
    out = _ended(chat)
    assert chat.child.exitstatus == 2  # a usage error, as in `golem ask`
    assert "temperature" in out and "Traceback" not in out
    assert _nothing_stored(home) and server.requests == []


def test_a_config_file_that_does_not_parse_is_reported_before_any_prompt(spawn, home):
    (home / "config.toml").write_text('model = "local:echo"\nmodel = "twice"\n')
    chat = spawn("chat")
    out = _ended(chat)
    assert chat.child.exitstatus == 1
    assert "config.toml" in out and "you>" not in out and "Traceback" not in out


def test_a_prompt_typed_at_once_waits_for_the_session_and_reaches_the_checked_model(spawn, home, server):
    chat = spawn("chat")
    chat.child.sendline("typed at once")  # before the banner: the session does not exist yet
    out = chat.expect(FOOTER)
    cid = banner_cid(out)
    assert "echo: typed at once" in out
    chat.prompt()
    assert "golem resume" in chat.leave()
    assert [m.content for m in Store(home).load(cid)] == ["typed at once", "echo: typed at once"]
    assert [r.json["model"] for r in server.requests] == ["echo"]


def test_ctrl_d_at_once_keeps_nothing_and_leaves_no_lock(spawn, home):
    chat = spawn("chat", "--system", "be brief")
    chat.prompt()
    chat.child.sendeof()  # while the session opens (a Ctrl-D before the terminal is raw is the tty's)
    out = _ended(chat)
    assert chat.child.exitstatus == 0
    assert "Nothing said, nothing saved." in out
    assert _nothing_stored(home)
    assert not any((home / "locks").glob("*.lock")) if (home / "locks").is_dir() else True


def test_the_banner_shows_the_conversation_the_first_turn_is_saved_in(spawn, home):
    """The conversation is created once the person's first key is on screen, before any Enter
    (the model was checked as the prompt was drawn: the unknown provider above needs no key)."""
    store = Store(home)
    chat = spawn("chat")
    cid = banner_cid(chat.prompt())
    assert not store.exists(cid) or store.load(cid) == []
    chat.child.send("h")
    deadline = time.monotonic() + PATIENCE
    while not store.exists(cid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert store.exists(cid), "a key typed at the prompt (no Enter yet) should have created the conversation"
    chat.say("ello")
    chat.leave()
    assert [m.content for m in store.load(cid)] == ["hello", "echo: hello"]


def test_the_session_is_open_when_ready_returns_even_before_the_openings_callback_ran():
    """The opening's future can be done before its done-callback has run (the callback waits
    its turn in the loop); a line acted on at that moment still finds the session open."""
    import asyncio

    from golem_cli.cli.repl.loop import Repl
    from golem_cli.cli.repl.opening import PendingSession

    session = object()
    pending = PendingSession(model="m", conversation_id="c", unique=8, open=lambda: (session, []))
    repl = Repl(pending, markdown=False, plain_input=True)

    async def main() -> object:
        assert repl._opener is not None
        repl._opener.start()
        repl._opener._work.result()  # the thread is done: its result is queued for the loop
        await asyncio.sleep(0)  # the loop sets the future, and queues the callback after this task
        await repl.ready()
        return repl.session

    assert asyncio.run(main()) is session


def _opener_with_check(opened: list[str]):
    from golem_cli.cli.repl.opening import PendingSession, SessionOpener

    session = object()

    def open_session():
        opened.append("open")
        return session, []

    pending = PendingSession(model="m", conversation_id="c", unique=8, open=open_session,
                             check=lambda: opened.append("check"))  # fmt: skip
    return SessionOpener(pending, lambda _: None), session


def test_a_checked_opening_checks_then_opens_the_session_after_go():
    import asyncio

    opened: list[str] = []
    opener, session = _opener_with_check(opened)

    async def main() -> object:
        future = opener.start()
        opener.go()
        return (await future)[0]

    assert asyncio.run(main()) is session
    assert opened == ["check", "open"]


def test_a_chat_that_ends_before_go_opens_nothing_and_leaves_no_thread():
    """The thread has checked and waits for ``go``; the chat's end lets it finish without
    opening (a session opened regardless of ``go`` would be opened by then: the end joins it)."""
    import asyncio
    import threading

    opened: list[str] = []
    opener, _ = _opener_with_check(opened)

    async def main() -> None:
        opener.start()

    asyncio.run(main())
    assert opener.session_at_end() is None
    assert "open" not in opened
    assert not any(t.name == "golem-open-session" for t in threading.enumerate())


def test_a_failed_check_is_the_openings_error_without_go():
    import asyncio

    import pytest
    from golem_cli.cli.repl.opening import PendingSession, SessionOpener
    from golem_cli.core.errors import ModelError

    def check() -> None:
        raise ModelError("unknown provider 'nosuch'")

    pending = PendingSession(model="m", conversation_id="c", unique=8, open=lambda: (object(), []), check=check)
    opener = SessionOpener(pending, lambda _: None)

    async def main() -> None:
        await opener.start()

    with pytest.raises(ModelError, match="nosuch"):
        asyncio.run(main())
    assert opener.session_at_end() is None
