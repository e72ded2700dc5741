"""Issue 8: planted files in the store and hostile FILE arguments. Real files: FIFOs,
symlinks, directories, sparse files, /dev/zero. Every command answers at once with one line,
never hangs, never reads gigabytes."""

from __future__ import annotations

import os
import stat

import pytest
from golem_cli.core.messages import Message
from golem_cli.store import Store

from tests.cli.conftest import Result

CID = "01a228ea-1414-732e-9d7a-7c1f891d89a7"
TIMEOUT = 30  # a FIFO would block forever: the test fails instead of hanging
# What could hang or never end (a FIFO, /dev/zero) is read by a golem process with TIMEOUT; the
# rest through golem_main (in this process), whose output, exit code and files are the same.
BLOCKING = ("fifo", "symlink-to-zero")


def plant(home, kind: str) -> str:
    store = Store(home)
    store.create([Message("user", "a good one")])
    path = store.messages_path(CID)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "symlink-to-zero":
        os.symlink("/dev/zero", path)
    elif kind == "sparse":
        with open(path, "wb") as f:
            f.truncate(64 << 20)  # 64 MiB of nothing, over the limit set below
    return str(path)


@pytest.mark.parametrize("kind", ["fifo", "directory", "symlink-to-zero", "sparse"])
@pytest.mark.parametrize("command", [["show", CID], ["export", CID, "--format", "json"], ["normalize", CID],
                                     ["ask", "--cid", CID, "hi", "-m", "offline:echo"]])  # fmt: skip
def test_a_special_file_in_place_of_a_conversation_is_refused_at_once(home, golem, golem_main, kind, command):
    path = plant(home, kind)
    env = {"GOLEM_MAX_HISTORY_BYTES": str(32 << 20)}
    done = golem(*command, env=env, timeout=TIMEOUT) if kind in BLOCKING else golem_main(*command, env=env)
    assert done.code != 0
    assert "Traceback" not in done.err and len(done.err.strip().splitlines()) == 1, done.err
    assert os.path.basename(path) in done.err or CID in done.err
    assert "--salvage" not in done.err  # nothing to salvage from a FIFO, a directory or a device
    assert done.err.count(os.path.basename(path)) <= 1 or kind == "sparse"  # the path named once


@pytest.mark.parametrize("kind", ["fifo", "sparse"])
def test_list_and_search_skip_it_with_one_warning_and_delete_removes_it(home, golem, golem_main, kind):
    path = plant(home, kind)
    name = os.path.basename(path)
    env = {"GOLEM_MAX_HISTORY_BYTES": str(32 << 20)}

    def run(*args: str) -> Result:
        return golem(*args, env=env, timeout=TIMEOUT) if kind in BLOCKING else golem_main(*args, env=env)

    listed = run("list")
    assert listed.code == 0 and "a good one" in listed.out and CID[:8] not in listed.out
    (line,) = [line for line in listed.err.splitlines() if name in line]
    # a FIFO is not a conversation file at all; a regular file that cannot be read is skipped
    assert line.startswith("ignored 1 file(s)" if kind == "fifo" else "skipped")
    found = run("search", "good")
    assert found.code == 0 and "a good one" in found.out
    assert sum(name in line for line in found.err.splitlines()) == (0 if kind == "fifo" else 1)
    gone = run("delete", CID, "--yes")
    assert gone.code == 0, gone.err
    assert not os.path.lexists(path)


def test_a_file_with_a_huge_number_is_listed_searched_and_deleted(home, golem_main):
    store = Store(home)
    store.messages_path(CID).parent.mkdir(parents=True, exist_ok=True)
    store.messages_path(CID).write_bytes(b'[{"role":"user","content":"big numbers","x":' + b"9" * 5000 + b"}]")
    assert "big numbers" in golem_main("list").out
    assert "big numbers" in golem_main("search", "numbers").out
    assert golem_main("delete", CID, "--yes").code == 0 and not store.messages_path(CID).exists()


def test_import_of_a_device_a_fifo_or_a_directory_is_refused(home, golem, golem_main, tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    for source in ("/dev/zero", str(fifo), str(tmp_path)):
        done = golem("import", source, timeout=TIMEOUT) if source != str(tmp_path) else golem_main("import", source)
        assert done.code != 0 and "Traceback" not in done.err
        assert "not a history file" in done.err, done.err


def test_a_file_over_the_limit_is_refused_with_what_to_do(home, golem_main, tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(2 << 20)
    done = golem_main("normalize", str(big), env={"GOLEM_MAX_HISTORY_BYTES": str(1 << 20)})
    assert done.code != 0 and "too large" in done.err and "GOLEM_MAX_HISTORY_BYTES" in done.err


def test_a_conversation_replaced_by_a_fifo_is_named_once_by_list(home, golem):
    store = Store(home)
    cid = store.create([Message("user", "was fine")])  # its sidecar stays
    path = store.messages_path(cid)
    path.unlink()
    os.mkfifo(path)
    listed = golem("list", timeout=TIMEOUT)
    assert listed.code == 0 and sum(path.name in line for line in listed.err.splitlines()) == 1, listed.err
    assert golem("delete", cid, "--yes", timeout=TIMEOUT).code == 0  # the FIFO goes to the trash, unopened
    refused = golem("restore", timeout=TIMEOUT)  # and does not come back
    assert refused.code == 2 and "FIFO" in refused.err and not os.path.lexists(path)


@pytest.mark.parametrize("kind", ["fifo", "directory", "symlink"])
def test_restore_refuses_a_special_file_planted_in_the_trash_and_leaves_it(home, golem, golem_main, kind):
    store = Store(home)
    good = store.create([Message("user", "a good one")])
    store.discard(good)
    planted = store.trash_dir / f"{CID}.json"
    if kind == "fifo":
        os.mkfifo(planted)
    elif kind == "directory":
        planted.mkdir()
    else:
        os.symlink(store.trash_dir / f"{good}.json", planted)  # a link to a good one is still not a history file
    (store.trash_dir / f"{CID}.meta.json").write_text("{}")
    os.utime(planted, follow_symlinks=False)  # the most recently deleted: what a bare `restore` picks
    for command in (["restore"], ["restore", CID], ["restore", CID[-6:], "--json"]):
        done = golem(*command, timeout=TIMEOUT) if kind in BLOCKING else golem_main(*command)
        assert done.code == 2 and done.out == "", done.out
        assert "Traceback" not in done.err and len(done.err.strip().splitlines()) == 1, done.err
        assert done.err.count(str(planted)) == 1 and "stays in the trash" in done.err
    assert os.path.lexists(planted) and not os.path.lexists(store.messages_path(CID))  # left where it was
    assert not store.meta_path(CID).exists()
    assert golem_main("list").out.count("a good one") == 0
    assert golem_main("restore", good).out.strip() == f"restored {good}"  # the others still come back


def test_every_refused_file_argument_is_one_line_naming_it_once(home, golem, golem_main, tmp_path):
    """import, normalize (also --salvage) and the -o of export and normalize: one line that
    names the path once, as it was typed, and a FIFO or device given to -o is left as it is
    (an atomic rename would have put a regular file in its place)."""
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(2 << 20)
    good = tmp_path / "good.json"
    good.write_text('[{"role": "user", "content": "hi"}]')
    cid = Store(home).create([Message("user", "hello")])
    env = {"GOLEM_MAX_HISTORY_BYTES": str(1 << 20)}
    blocking = ("/dev/zero", str(fifo))

    def run(path: str, *args: str, env: dict[str, str] | None = None) -> Result:
        return golem(*args, env=env, timeout=TIMEOUT) if path in blocking else golem_main(*args, env=env)

    refused = {}
    for source in ("/dev/zero", str(fifo), str(tmp_path), "/proc/self/environ", str(big), str(tmp_path / "missing.json")):
        for command in (["import", source], ["normalize", source], ["normalize", "--salvage", source]):
            refused[" ".join(command)] = run(source, *command, env=env), source
    for target in (str(fifo), str(tmp_path)):
        refused[f"export -o {target}"] = run(target, "export", cid, "-o", target), target
        refused[f"normalize -o {target}"] = run(target, "normalize", str(good), "-o", target), target
    for what, (done, path) in refused.items():
        assert done.code == 2 and "Traceback" not in done.err and len(done.err.strip().splitlines()) == 1, (what, done.err)
        assert done.err.count(os.path.basename(path)) == 1, (what, done.err)
    assert "no such file or conversation" not in refused[f"import {tmp_path / 'missing.json'}"][0].err  # import takes files
    assert os.path.exists(fifo) and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_turn_that_would_grow_the_file_over_the_limit_is_not_saved(home, golem_main):
    """A save over GOLEM_MAX_HISTORY_BYTES would write a file golem then refuses to read:
    it is refused with one line saying the limit and how to raise it, the file kept."""
    store = Store(home)
    cid = store.create([Message("user", "first question"), Message("assistant", "first answer")])
    path = store.messages_path(cid)
    before = path.read_bytes()
    env = {"GOLEM_MAX_HISTORY_BYTES": str(len(before) + 20)}  # the file reads; one more turn would not
    done = golem_main(
        "ask", "--cid", cid, "a second question, long enough to cross the limit", "-m", "offline:echo", env=env
    )
    assert done.code != 0 and "Traceback" not in done.err
    (line,) = done.err.strip().splitlines()
    assert f"{len(before) + 20:,} bytes limit" in line and "GOLEM_MAX_HISTORY_BYTES to at least" in line, line
    assert path.read_bytes() == before
    assert golem_main("show", cid, env=env).code == 0  # still readable under the same limit
    again = golem_main("ask", "--cid", cid, "a second question", "-m", "offline:echo")  # the limit raised (default)
    assert again.code == 0, again.err
    assert len(Store(home).load(cid)) == 4
