"""`golem search`: conversations that mention a text, found whatever the case or escaping."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from golem_cli.core.messages import Message, ThinkingBlock, ToolCall
from golem_cli.store import Store

GOLEM = os.path.join(os.path.dirname(sys.executable), "golem")


def run_process(home, *args):
    """``golem search`` as its own process (a timeout turns a hang into a failure; generous: a
    4,000-conversation catch-up took 50 s at load 10)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOLEM_")} | {"GOLEM_HOME": str(home)}
    return subprocess.run([GOLEM, "search", *args], capture_output=True, text=True, timeout=180, env=env)


@pytest.fixture
def golem_at(golem_main, tmp_path, monkeypatch):
    """``golem_at(tmp_path, *args)``: golem through golem_main with ``tmp_path`` as GOLEM_HOME
    (where the tests make their store), answered as a finished process."""
    monkeypatch.setenv("GOLEM_HOME", str(tmp_path))

    def call(home, *args):
        assert home == tmp_path
        done = golem_main(*args)
        return subprocess.CompletedProcess(["golem", *args], done.code, done.out, done.err)

    return call


@pytest.fixture
def run(golem_at):
    """``run(tmp_path, *args)``: `golem search` (golem_at)."""
    return lambda home, *args: golem_at(home, "search", *args)


def test_finds_by_content_case_insensitively_with_a_snippet(run, tmp_path):
    store = Store(tmp_path)
    a = store.create([Message("user", "How do I parse JSON in Go?"), Message("assistant", "Use encoding/json.")])
    b = store.create([Message("user", "Tell me about <html> & the DOM"), Message("assistant", "Élan vital, ÉTÉ")])
    store.create([Message("user", "nothing relevant")])
    done = run(tmp_path, "ENCODING/json")
    assert done.returncode == 0
    assert a[-12:] in done.stdout and "#2 assistant: Use encoding/json." in done.stdout
    # Characters Go escapes in the file, and non-ASCII case folding.
    assert b[-12:] in run(tmp_path, "<HTML> &").stdout
    assert b[-12:] in run(tmp_path, "été").stdout


def test_looks_into_thinking_and_tool_calls_and_prints_json(run, tmp_path):
    store = Store(tmp_path)
    cid = store.create([Message("assistant", thinking=[ThinkingBlock("ponder the sieve")],
                                tool_calls=[ToolCall("c1", "primes", '{"upto": "sieve of eratosthenes"}')])])  # fmt: skip
    hits = json.loads(run(tmp_path, "--json", "Eratosthenes").stdout)
    assert [(h["id"], h["messageIndex"], h["role"]) for h in hits] == [(cid, 0, "assistant")]
    assert "sieve" in hits[0]["snippet"]


def test_each_hit_names_its_conversation_by_the_handle_the_hints_print(run, golem_at, tmp_path):
    """Its unique prefix was printed (``01a232c4-0b``): IDs made within seconds share their
    first characters, so a conversation made after the search could make it ambiguous."""
    store = Store(tmp_path)
    cids = [store.create([Message("user", f"the wombat question {n}")]) for n in range(2)]
    done = run(tmp_path, "wombat")
    headings = [line.split()[0] for line in done.stdout.splitlines() if not line.startswith(" ")]
    assert sorted(headings) == sorted(cid[-12:] for cid in cids), done.stdout
    store.create([Message("user", "made just after the search")])
    for heading in headings:  # still what `golem show` takes
        shown = golem_at(tmp_path, "show", heading)
        assert shown.returncode == 0 and "wombat" in shown.stdout, shown.stderr


def test_no_match_and_corrupt_files(run, tmp_path):
    store = Store(tmp_path)
    store.create([Message("user", "hello")])
    (store.conversations_dir / "01a228ea-1414-732e-9d7a-7c1f891d89a7.json").write_bytes(b"[{broken hello")
    done = run(tmp_path, "goodbye")
    assert done.returncode == 1 and "no conversation mentions 'goodbye'" in done.stderr
    assert "Traceback" not in run(tmp_path, "hello").stderr


def test_role_and_since_options(run, tmp_path):
    store = Store(tmp_path)
    cid = store.create([Message("user", "quokka please"), Message("assistant", "a quokka")])
    assert "#2 assistant" in run(tmp_path, "quokka", "--role", "assistant").stdout
    assert run(tmp_path, "quokka", "--since", "1h").stdout.startswith(cid[-12:])
    assert run(tmp_path, "quokka", "--since", "2999-01-01").returncode == 1
    bad = run(tmp_path, "quokka", "--since", "yesterday-ish")
    assert bad.returncode != 0 and "--since" in bad.stderr and "Traceback" not in bad.stderr
    assert run(tmp_path, "quokka", "--role", "robot").returncode != 0
    assert "#1 user" in run(tmp_path, '"quokka please"').stdout and run(tmp_path, "quok*").returncode == 0


def test_hits_are_numbered_as_show_numbers_them_for_fork_at(run, golem_at, tmp_path):
    """`#N` in a hit is `golem show`'s number (from 1, the system prompt aside), so `golem fork
    ID --at N` keeps the conversation up to the hit; --json keeps the file's index beside it."""
    store = Store(tmp_path)
    cid = store.create([Message("user", "hello"), Message("assistant", "the walrus"), Message("user", "bye")])
    store.create([Message("system", "be a brief seal"), Message("user", "hi"), Message("assistant", "the seal")])
    for answered_by in ("index", "files"):
        assert "#2 assistant: the walrus" in run(tmp_path, "walrus").stdout, answered_by
        assert "#2 assistant: the seal" in run(tmp_path, "the seal").stdout, answered_by
        assert "system prompt: be a brief seal" in run(tmp_path, "brief").stdout, answered_by
        found = json.loads(run(tmp_path, "--json", "walrus").stdout)
        assert [(h["messageIndex"], h["number"]) for h in found] == [(1, 2)], answered_by
        assert [(h["messageIndex"], h["number"]) for h in json.loads(run(tmp_path, "--json", "brief").stdout)] == [
            (0, None)
        ]
        store.index.close()
        for suffix in ("", "-wal", "-shm"):
            (tmp_path / f"index.sqlite{suffix}").unlink(missing_ok=True)
    show = golem_at(tmp_path, "show", cid)
    assert "[2] assistant" in show.stdout
    fork = golem_at(tmp_path, "fork", cid, "--at", "2", "--no-chat")
    assert fork.returncode == 0, fork.stderr
    assert [m.content for m in Store(tmp_path).load(fork.stdout.strip())] == ["hello", "the walrus"]


def _synced(home, count: int) -> None:
    """``count`` conversations as a sync tool brings them: messages files, no sidecars, no index;
    spelled as another program may spell them (capitalised keys, which Go reads), so that each
    goes through the careful reader and the catch-up takes more than a moment."""
    conversations = home / "conversations"
    conversations.mkdir(parents=True)
    for i in range(count):
        cid = f"01a228ea-1414-732e-9d7a-{i:012x}"
        said = [{"Role": "user", "Content": f"a needle {i}"}] + [{"Role": "assistant", "Content": "some words"}] * 40
        (conversations / f"{cid}.json").write_text(json.dumps(said))


def test_a_long_catch_up_shows_a_bar_on_a_terminal_and_nothing_on_a_pipe(tmp_path):
    import pexpect

    _synced(tmp_path, 4000)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOLEM_")} | {"GOLEM_HOME": str(tmp_path)}
    child = pexpect.spawn(GOLEM, ["search", "needle 3999"], env=env, encoding="utf-8", dimensions=(24, 100), timeout=120)
    child.expect("golem: indexing conversations")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and "#1 user: a needle 3999" in (child.before or "")
    for suffix in ("", "-wal", "-shm"):
        (tmp_path / f"index.sqlite{suffix}").unlink(missing_ok=True)
    piped = run_process(tmp_path, "needle 3999")  # a process: a catch-up this large reads in worker processes
    assert piped.returncode == 0 and piped.stderr == "" and "#1 user: a needle 3999" in piped.stdout


def test_the_bar_shows_only_once_the_work_takes_more_than_a_moment(monkeypatch, capsys):
    from golem_cli.cli.render import progress

    monkeypatch.setenv("GOLEM_FORCE_TERMINAL", "1")
    now = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    bar = progress.TerminalProgress()
    bar("indexing conversations", 1, 10)
    now[0] += progress.MOMENT / 2
    bar("indexing conversations", 2, 10)
    assert capsys.readouterr().err == ""  # a moment: nothing drawn
    now[0] += progress.MOMENT
    bar("indexing conversations", 3, 10)
    drawn = capsys.readouterr().err
    assert "golem: indexing conversations" in drawn and "3/10" in drawn
    bar("indexing conversations", 10, 10)
    assert bar._bar is None  # done: the bar is taken away
    now[0] += 10 * progress.MOMENT
    bar("reading conversations", 1, 5)  # a new piece of work starts its own moment
    assert capsys.readouterr().err.count("reading") == 0


def test_a_message_shared_with_forks_is_one_hit_naming_the_forks(run, tmp_path):
    """A parent and its two forks gave three identical hits for one message."""
    store = Store(tmp_path)
    parent = store.create([Message("system", "be brief"), Message("user", "the axolotl question"),
                           Message("assistant", "an answer"), Message("user", "more")])  # fmt: skip
    forks = [store.fork(parent, 2), store.fork(parent)]
    later = store.fork(parent, 1)
    store.save(later, [*store.load(later), Message("assistant", "another axolotl reply")])
    hits = json.loads(run(tmp_path, "--json", "axolotl").stdout)
    assert [(h["id"], h["number"]) for h in hits if h["id"] != later] == [(parent, 1)]
    (shared,) = [h for h in hits if h["id"] == parent]
    assert sorted(shared["forks"]) == sorted([*forks, later])  # its first hit is the copied message too
    done = run(tmp_path, "axolotl")
    assert done.stdout.count("user: the axolotl question") == 1, done.stdout
    assert "#1 user: the axolotl question" in done.stdout  # numbered as `golem show` numbers it
    assert all(cid[-12:] in done.stdout for cid in [*forks, later])


def test_a_fork_whose_hit_is_its_own_message_keeps_its_hit(run, tmp_path):
    store = Store(tmp_path)
    parent = store.create([Message("user", "about the axolotl"), Message("assistant", "an answer")])
    fork = store.fork(parent, 1)
    store.save(fork, [Message("user", "about something else"), Message("assistant", "the axolotl again")])
    hits = json.loads(run(tmp_path, "--json", "axolotl").stdout)
    assert sorted((h["id"], h["forks"]) for h in hits) == sorted([(parent, []), (fork, [])])
