"""`golem ask`: one turn for scripts, through golem's entry point (the console script where the test is about the process)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from golem_cli.store import Store

from tests.inprocess import Result
from tests.providerserver import Reply, Scenario
from tests.repl.conftest import GOLEM, golem_env
from tests.repl.histories import write_conversation


@pytest.fixture
def ask(golem_main):
    """``ask(*args, stdin=..., env=...)``: ``golem ask`` through golem's entry point in this process
    (``golem_main``), for what a command prints, stores and sends; the tests about the process
    itself (a Ctrl-C mid-reply) start the real console script."""

    def run(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> Result:
        return golem_main("ask", *args, input=stdin, env=env)

    return run


def test_prints_only_the_reply_and_saves(ask, home):
    done = ask("hello world")
    assert done.code == 0, done.err
    assert done.out == "echo: hello world\n"
    (row,) = Store(home).list()
    assert [m.content for m in Store(home).load(row.id)] == ["hello world", "echo: hello world"]


def test_prompt_from_stdin_and_combined_with_argument(ask, home):
    assert ask(stdin="from stdin\n").out == "echo: from stdin\n"
    assert ask("summarize", stdin="some text").out == "echo: summarize\n\nsome text\n"


def test_json_output(ask, home):
    done = ask("--json", "numbers")
    data = json.loads(done.out)
    assert data["reply"] == "echo: numbers"
    assert data["model"] == "local:echo"
    assert (data["ending"], data["interrupted"]) == ("complete", False)
    assert data["usage"]["inputTokens"] == 11 and data["usage"]["outputTokens"] == 7
    history = Store(home).load(data["conversationId"])
    assert {m.run_id for m in history} == {data["runId"]}


def test_continue_and_cid(ask, home):
    first = json.loads(ask("--json", "one").out)
    second = json.loads(ask("--json", "-c", "two").out)
    assert second["conversationId"] == first["conversationId"]
    third = json.loads(ask("--json", "--cid", first["conversationId"][:8], "three").out)
    assert third["conversationId"] == first["conversationId"]
    history = Store(home).load(first["conversationId"])
    assert [m.content for m in history if m.role == "user"] == ["one", "two", "three"]
    assert len({m.run_id for m in history}) == 3


def test_no_stream(ask, home, server):
    server.enqueue(Scenario(reply=Reply(text="whole reply")), Scenario(reply=Reply(text="whole claude reply")))
    assert ask("--no-stream", "x").out == "whole reply\n"
    assert ask("--no-stream", "-m", "claude:claude-test", "y").out == "whole claude reply\n"
    assert ask("-m", "claude:claude-test", "z").code == 0  # and the default streams, on both
    assert ask("w").code == 0
    no, no_claude, claude, openai = (r.json for r in server.requests)
    for body in (no, no_claude):  # a non-streaming request, answered by a JSON body
        assert "stream" not in body and "stream_options" not in body
    assert claude["stream"] is True and "stream_options" not in claude
    assert openai["stream"] is True and openai["stream_options"] == {"include_usage": True}


def test_a_cut_off_reply_says_why_and_json_has_the_providers_word(ask, home, server):
    server.enqueue(Scenario(reply=Reply(text="The first half of", finish="length")))
    done = ask("tell me everything")
    assert done.code == 0 and done.out == "The first half of\n"
    assert "cut off" in done.err and "output token limit (length)" in done.err and "max_tokens" in done.err
    server.enqueue(Scenario(reply=Reply(text="Half", finish="max_tokens")))
    data = json.loads(ask("--json", "-m", "claude:claude-test", "again").out)
    assert (data["reply"], data["finishReason"], data["refusal"]) == ("Half", "max_tokens", False)
    assert (data["ending"], data["interrupted"]) == ("cut_off", False)


def test_a_refusal_is_shown_saved_and_marked(ask, home, server):
    server.enqueue(Scenario(reply=Reply(refusal="I can't help with that.")))
    done = ask("something bad")
    assert done.out == "I can't help with that.\n" and "refused" in done.err
    (row,) = Store(home).list()
    assert Store(home).load(row.id)[-1].content == "I can't help with that."
    server.enqueue(Scenario(reply=Reply(refusal="-")))
    data = json.loads(ask("--json", "-m", "claude:claude-test", "again").out)
    assert (data["reply"], data["finishReason"], data["refusal"]) == ("[refused]", "refusal", True)
    assert (data["ending"], data["interrupted"]) == ("refused", False)


def test_provider_error_is_one_line_and_nonzero(ask, home, server):
    server.enqueue(Scenario(status=404))
    done = ask("are you there")
    assert done.code == 1
    assert done.out == ""
    lines = done.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("golem: ") and "404" in lines[0]
    (row,) = Store(home).list()
    assert Store(home).load(row.id)[0].content == "are you there"  # the prompt is kept


def test_no_prompt_is_a_usage_error(ask, home):
    done = ask(stdin="")
    assert done.code == 2
    assert "no prompt" in done.err


def test_unknown_conversation(ask, home):
    done = ask("--cid", "0000ffff", "x")
    assert done.code != 0
    assert "Traceback" not in done.err and done.err.count("\n") == 1


def test_ctrl_c_mid_reply_keeps_the_partial_reply_and_exits_130(home, server):
    import signal

    server.enqueue(Scenario(reply=Reply(text=" ".join(f"w{i}" for i in range(200))), delay=0.05))
    # A shell that runs pytest in the background ignores SIGINT, and children inherit that:
    # start golem with the default disposition, as a terminal's foreground job has it.
    proc = subprocess.Popen([GOLEM, "ask", "stream slowly"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=golem_env(home), preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    first = b""
    while b"w1 " not in first:  # unbuffered: "w0 w1" of the reply has arrived
        piece = os.read(proc.stdout.fileno(), 64)
        assert piece, "the reply ended before Ctrl-C"
        first += piece
    proc.send_signal(signal.SIGINT)
    out, err = (b.decode() for b in proc.communicate(timeout=30))
    assert proc.returncode == 130
    assert "Traceback" not in err and "partial reply is saved" in err
    (row,) = Store(home).list()
    history = Store(home).load(row.id)
    assert history[0].content == "stream slowly"
    assert history[1].content.startswith("w0 w1") and history[1].content.endswith("[reply interrupted]")
    assert (first.decode() + out).startswith("w0 w1")


def test_json_of_an_interrupted_reply_has_what_arrived_without_the_stored_mark(home, server):
    """``interrupted: true`` says it; the reply is what arrived (the file keeps the mark)."""
    import signal
    import time

    server.enqueue(Scenario(reply=Reply(text=" ".join(f"w{i}" for i in range(400))), delay=0.02))
    proc = subprocess.Popen([GOLEM, "ask", "--json", "stream slowly"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=golem_env(home), preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    deadline = time.monotonic() + 30
    while server.frames_sent < 20 and time.monotonic() < deadline:
        time.sleep(0.05)  # until part of the reply (20 of its 400 words' events) is sent
    proc.send_signal(signal.SIGINT)
    out, err = (b.decode() for b in proc.communicate(timeout=30))
    assert proc.returncode == 130, err
    reply = json.loads(out)
    (row,) = Store(home).list()
    stored = Store(home).load(row.id)[1].content
    assert reply["interrupted"] is True and stored.endswith("[reply interrupted]")
    assert reply["ending"] == "interrupted"
    assert reply["reply"].startswith("w0 w1") and "[reply interrupted]" not in reply["reply"]
    assert stored.startswith(reply["reply"] + "\n\n")


def test_ctrl_c_before_any_of_the_reply_says_nothing_arrived(home, server):
    """A server that only sends keep-alive comments: Ctrl-C ends the turn with nothing of the
    reply, and the line says that rather than "the partial reply is saved"."""
    import signal
    import time

    server.enqueue(Scenario(hostile="keepalive", delay=0.05))
    proc = subprocess.Popen([GOLEM, "ask", "--json", "say something"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=golem_env(home), preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    deadline = time.monotonic() + 30
    while server.frames_sent < 3 and time.monotonic() < deadline:
        time.sleep(0.05)  # until the reply's head and a few comments are sent
    proc.send_signal(signal.SIGINT)
    out, err = (b.decode() for b in proc.communicate(timeout=30))
    (row,) = Store(home).list()
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert err == f"golem: interrupted; nothing of the reply arrived; your prompt is saved in conversation {row.id}\n"
    assert json.loads(out)["interrupted"] is True and json.loads(out)["reply"] == ""
    assert [m.content for m in Store(home).load(row.id)] == ["say something"]


def test_corrupt_conversation_is_one_line_pointing_at_normalize(ask, home):
    cid = write_conversation(home, ["hello"])
    path = home / "conversations" / f"{cid}.json"
    path.write_bytes(b'[{"role": "user", "content": ')
    done = ask("--cid", cid[:8], "again")
    assert done.code == 2
    assert done.err.count("\n") == 1 and "golem normalize" in done.err
    assert path.read_bytes() == b'[{"role": "user", "content": '  # untouched


PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452")


def test_attach_a_file_and_a_url(ask, home, server, tmp_path):
    image = tmp_path / "cat.png"
    image.write_bytes(PNG)
    done = ask("-a", str(image), "-a", "https://example.com/dog.jpg", "what is this?")
    assert done.code == 0, done.err
    content = server.requests[-1].json["messages"][-1]["content"]
    assert content[0] == {"type": "text", "text": "what is this?"}
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")
    assert content[2]["image_url"]["url"] == "https://example.com/dog.jpg"
    (row,) = Store(home).list()
    prompt = Store(home).load(row.id)[0]
    assert prompt.parts[0].data == PNG and prompt.parts[0].media_type == "image/png"
    assert prompt.parts[1].url == "https://example.com/dog.jpg"


def test_attach_errors_are_one_line_and_send_nothing(ask, home, server, tmp_path):
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01binary")
    for source, words in ((str(tmp_path / "missing.png"), "no such file"), (str(tmp_path / "blob.bin"), "cannot attach")):
        done = ask("-a", source, "x")
        assert done.code == 2 and words in done.err and done.err.count("\n") == 1
    assert server.requests == [] and Store(home).list() == []


def test_text_files_are_inlined_with_their_names(ask, home, server, tmp_path):
    (tmp_path / "notes.txt").write_text("buy milk\n")
    (tmp_path / "main.py").write_text("print('hi')\n")
    done = ask("-a", str(tmp_path / "notes.txt"), "-a", str(tmp_path / "main.py"), "summarize")
    assert done.code == 0, done.err
    sent = server.requests[-1].json["messages"][-1]["content"]
    assert sent == 'summarize\n\n<file name="notes.txt">\nbuy milk\n</file>\n\n<file name="main.py">\nprint(\'hi\')\n</file>'
    (row,) = Store(home).list()
    assert Store(home).load(row.id)[0].content == sent and Store(home).load(row.id)[0].parts == []


def test_url_attachments_the_provider_cannot_fetch_are_downloaded(ask, home, server):
    pdf, text = b"%PDF-1.4 tiny", b"remote notes"
    server.files.update({"/files/paper.pdf": (pdf, "application/pdf"), "/files/notes.txt": (text, "text/plain; charset=utf-8")})
    pdf_url, text_url = server.url + "/files/paper.pdf", server.url + "/files/notes.txt"
    done = ask("-a", pdf_url, "-a", text_url, "read these")  # OpenAI-compatible: no document URLs
    assert done.code == 0, done.err
    content = server.requests[-1].json["messages"][-1]["content"]
    assert content[0]["text"] == 'read these\n\n<file name="notes.txt">\nremote notes\n</file>'
    assert content[1] == {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0xLjQgdGlueQ==", "filename": "document.pdf"}}
    done = ask("-m", "claude:claude-test", "-a", pdf_url, "and you?")  # Anthropic fetches PDFs itself
    assert done.code == 0, done.err
    block = server.requests[-1].json["messages"][-1]["content"][1]
    block.pop("cache_control", None)  # the newest turn's cache breakpoint (ADR 0024) may sit on it
    assert block == {"type": "document", "source": {"type": "url", "url": pdf_url}}
    assert server.sdk_rejections == []


def test_url_downloads_are_bounded_and_fail_in_one_line(ask, home, server):
    server.files["/files/huge.pdf"] = (b"x" * (20 * 2**20 + 1), "application/pdf")
    for path, words in (("/files/huge.pdf", "too large to attach"), ("/files/missing.pdf", "HTTP 404")):
        done = ask("-a", server.url + path, "x")
        assert done.code == 2 and words in done.err and done.err.count("\n") == 1, done.err
    assert [r.path for r in server.requests if r.method == "POST"] == [] and Store(home).list() == []


def test_a_typo_in_the_config_file_is_pointed_out(ask, home):
    config = home / "config.toml"
    config.write_text(config.read_text().replace("model = ", "max_mesages = 5\nmodel = ", 1))
    done = ask("hi")
    assert done.code == 0 and done.out == "echo: hi\n"
    assert "unknown setting(s) max_mesages (did you mean max_messages?) ignored" in done.err


def test_an_empty_prompt_is_refused(ask, home, server):
    done = ask("   ")
    assert done.code == 2 and "the prompt is empty" in done.err
    assert server.requests == []


def test_no_model_configured_is_an_error_unless_the_offline_model_is_named(ask, home):
    (home / "config.toml").unlink()
    done = ask("hello")
    assert done.code == 2 and done.out == ""
    assert done.err.startswith("golem: no model configured: set OPENAI_API_KEY") and "-m offline:echo" in done.err
    assert len(done.err.splitlines()) == 1
    assert Store(home).list() == []  # nothing was stored
    done = ask("-m", "offline:echo", "hello")
    assert done.code == 0 and "hello" in done.out
    again = ask("-c", "again")  # the conversation names its model
    assert again.code == 0 and "again" in again.out


def test_options_on_the_command_line_reach_the_request(ask, home, server):
    done = ask("-o", "temperature", "0.25", "--option", "max_tokens", "64", "-o", "stop=END", "-o", "stop", "###", "hi")
    assert done.code == 0, done.err
    body = server.requests[-1].json
    assert (body["temperature"], body["max_tokens"], body["stop"]) == (0.25, 64, ["END", "###"])
    assert server.sdk_rejections == []


def test_options_in_the_config_per_provider_and_per_model(ask, home, server):
    config = home / "config.toml"
    text = config.read_text().replace("[providers.local]\n", "[providers.local]\ntemperature = 0.5\nmax_tokens = 99\n")
    config.write_text(text + '\n[models."local:echo"]\ntemperature = 0.75\n')
    assert ask("hi").code == 0
    assert (server.requests[-1].json["temperature"], server.requests[-1].json["max_tokens"]) == (0.75, 99)
    assert ask("-o", "temperature", "0", "hi").code == 0
    assert server.requests[-1].json["temperature"] == 0


def test_bad_options_are_refused_before_anything_is_sent(ask, home, server):
    for args, says in [
        (["-o", "temperature", "hot"], "option temperature = 'hot' given with -o is not a number from 0 to 2"),
        (["-o", "colour", "red"], "unknown model option 'colour'"),
        (["-o", "temprature", "0.2"], "unknown model option 'temprature' given with -o (did you mean temperature?)"),
        (["-o", "temperature", "3"], "option temperature = 3 given with -o is out of range: it takes a number from 0 to 2"),
        (["-o", "thinking_budget", "2048"], "thinking_budget is an option of Anthropic models"),
        (["-m", "claude:claude-test", "-o", "seed", "3"], "seed is not an option of Anthropic models"),
    ]:
        done = ask(*args, "hi")  # a usage error, as every other bad flag is
        assert done.code == 2 and says in done.err and len(done.err.strip().splitlines()) == 1, done.err
    assert server.requests == [] and Store(home).list() == []


def test_context_tokens_bound_what_is_sent(ask, home, server):
    empty = ask("--context-tokens", "3", "a new conversation has no history to bound, whatever its prompt")
    assert empty.code == 0 and empty.err == "" and empty.out.startswith("echo: a new conversation")
    single = ask("-c", "--context-tokens", "3", "one turn, over the budget of 3 tokens")
    assert single.code == 1 and "newest turn of this conversation alone is about" in single.err
    assert "raise --context-tokens" in single.err and len(single.err.strip().splitlines()) == 1
    assert len(server.requests) == 1  # nothing was sent for the turn over the budget
    (row,) = Store(home).list()
    assert [m.content for m in Store(home).load(row.id)][-1] == "one turn, over the budget of 3 tokens"  # kept
    Store(home).delete(row.id)
    write_conversation(home, [f"question {n}: " + "word " * 40 for n in range(6)])  # six turns of ~100 tokens
    before = len(server.requests)
    assert ask("-c", "--context-tokens", "250", "short").code == 0
    sent = server.requests[before].json["messages"]
    assert 3 <= len(sent) <= 7 and sent[-1]["content"] == "short"  # about two turns of ~100 tokens, then the prompt
    done = ask("-c", "--context-tokens", "5", "again")
    assert done.code == 1 and "more than the context budget of 5 tokens" in done.err
    assert "raise --context-tokens" in done.err and len(done.err.strip().splitlines()) == 1
    config = home / "config.toml"
    config.write_text("context_tokens = 5\n" + config.read_text())
    assert ask("-c", "and from the config").code == 0
    assert [m["content"] for m in server.requests[-1].json["messages"]] == ["again", "and from the config"]


def test_a_reply_of_the_wrong_shape_is_one_line_and_the_conversation_still_loads(ask, golem_main, home, server):
    frames = [{"choices": [{"index": 0, "delta": {"content": "Half a"}, "finish_reason": None}]},
              {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": 7, "function": {"name": "f"}}]}}]}]  # fmt: skip
    server.enqueue(Scenario(sse=b"".join(b"data: " + json.dumps(f).encode() + b"\n\n" for f in frames)))
    done = ask("go")
    assert done.code == 1 and "wrong shape" in done.err and len(done.err.strip().splitlines()) == 1
    (row,) = Store(home).list()
    history = Store(home).load(row.id)
    assert [m.content for m in history] == ["go", "Half a\n\n[reply interrupted]"] and history[1].tool_calls == []
    for command in (["show", row.id], ["normalize", "--check", row.id], ["export", row.id]):  # all read it back
        assert golem_main(*command).code == 0, command
    # the same in a whole (non-streaming) answer: a call whose name is a number, and a "message" that is a string
    bad = [{"choices": [{"message": {"content": "x", "tool_calls": [{"id": "c1", "type": "function",
                                                                    "function": {"name": 7, "arguments": "{}"}}]}}]},
           {"choices": [{"message": "a string"}]}, {"choices": {"0": {}}}]  # fmt: skip
    for body in bad:
        server.enqueue(Scenario(body=json.dumps(body).encode()))
        again = ask("--cid", row.id, "--no-stream", "once more")
        assert again.code == 1 and "wrong shape" in again.err and len(again.err.strip().splitlines()) == 1
    assert [m.content for m in Store(home).load(row.id)][2:] == ["once more"] * 3
    assert ask("--cid", row.id, "and now?").out == "echo: and now?\n"


def test_an_endless_reply_is_cut_kept_and_explained(ask, home, server):
    config = home / "config.toml"
    config.write_text(config.read_text().replace("[providers.local]\n", "[providers.local]\nmax_reply_bytes = 1000000\n"))
    server.enqueue(Scenario(hostile="flood"))
    done = ask("talk forever")
    assert done.code == 1 and "passed max_reply_bytes (1,000,000 bytes)" in done.err
    assert len(done.err.strip().splitlines()) == 1
    (row,) = Store(home).list()
    reply = Store(home).load(row.id)[1].content
    assert reply.startswith("All work and no play") and reply.endswith("[reply interrupted]") and len(reply) < 1_000_000


def test_ctrl_c_during_a_flood_saves_the_partial_reply(home, server):
    import signal
    import time

    server.enqueue(Scenario(hostile="flood"))
    proc = subprocess.Popen([GOLEM, "ask", "flood me"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=golem_env(home), preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    assert os.read(proc.stdout.fileno(), 8) == b"All work"
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)  # benchmarks/hostile_server.py measures how soon
    assert proc.returncode == 130 and b"partial reply is saved" in err
    (row,) = Store(home).list()
    assert Store(home).load(row.id)[1].content.endswith("[reply interrupted]")


@pytest.mark.parametrize(("preset", "variable", "key"), [("deepseek", "DEEPSEEK_API_KEY", "reasoning_content"),
                                                         ("openrouter", "OPENROUTER_API_KEY", "reasoning")])  # fmt: skip
def test_a_presets_reasoning_becomes_thinking_and_is_not_sent_back(ask, home, server, preset, variable, key):
    """DeepSeek's reasoning_content and OpenRouter's reasoning, through the preset (its key
    variable alone; the table only points it at the loopback server)."""
    config = home / "config.toml"
    config.write_text(config.read_text() + f'\n[providers.{preset}]\nbase_url = "{server.openai_base_url}"\n')
    env = {variable: "sk-test"}
    server.enqueue(Scenario(reply=Reply(text="42.", thinking="Six times seven.", reasoning_key=key)))
    first = ask("-m", f"{preset}:some-model", "six times seven?", env=env)
    assert (first.code, first.out) == (0, "42.\n"), first.err
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"
    (row,) = Store(home).list()
    assert [(t.text, t.signature) for t in Store(home).load(row.id)[1].thinking] == [("Six times seven.", "")]
    again = ask("-c", "-m", f"{preset}:some-model", "sure?", env=env)
    assert again.code == 0, again.err
    sent = server.requests[1].json["messages"]
    assert sent[1] == {"role": "assistant", "content": "42."}  # the reasoning is not sent back (spec §9.1)
