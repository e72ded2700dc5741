"""Failures become one line on stderr and an exit code; never a traceback unless --debug."""

from __future__ import annotations

import errno
import os
import subprocess
import sys

import pytest
from golem_cli.core.messages import Message
from golem_cli.store import Store

from tests.cli.conftest import GOLEM_CMD, assert_one_line_error


def test_full_disk_is_one_line(home, golem_in, monkeypatch, tmp_path):
    cid = Store(home).create([Message("user", "hi")])

    def no_space(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", no_space)
    result = golem_in("export", cid, "-o", str(tmp_path / "x.json"))
    assert result.code == 1
    assert_one_line_error(result)
    assert "the disk is full" in result.err
    assert not list(tmp_path.glob(".x.json*"))  # the temporary file was removed


def test_permission_denied_is_one_line(home, golem_in, monkeypatch, tmp_path):
    source = tmp_path / "h.json"
    source.write_text('[{"role":"user","content":"hi"}]')
    real_open = os.open

    def denied(path, *args, **kwargs):
        if str(path).startswith(str(home)):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", denied)
    result = golem_in("import", str(source))
    assert result.code == 1
    assert_one_line_error(result)
    assert "permission denied" in result.err and str(home) in result.err


def test_keyboard_interrupt_is_quiet(home, golem_in, monkeypatch):
    Store(home).create([Message("user", "hi")])

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("golem_cli.store.store.Store.listing", interrupted)
    result = golem_in("list")
    assert result.code == 130 and result.err == ""
    result = golem_in("normalize", "last")  # through typer
    assert result.code == 130 and result.err == ""


def test_a_bug_is_one_line_and_debug_shows_the_traceback(home, golem_in, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("golem_cli.store.store.Store.listing", broken)
    result = golem_in("list")
    assert result.code == 1
    assert_one_line_error(result)
    assert "internal error: RuntimeError: boom" in result.err and "--debug" in result.err
    debug = golem_in("--debug", "list")
    assert debug.code == 1 and "Traceback" in debug.err and "RuntimeError: boom" in debug.err


def test_usage_errors_exit_2_without_traceback(golem_main):
    for args in (["list", "--bogus"], ["show"], ["nosuchcommand"], ["list", "--limit", "-1"], ["export", "x", "-f", "yaml"]):
        result = golem_main(*args)
        assert result.code == 2, (args, result.err)
        assert "Traceback" not in result.err


def test_conflicting_normalize_options(golem_main, tmp_path):
    source = tmp_path / "h.json"
    source.write_text("[]")
    for args in (["-o", str(tmp_path / "o.json"), "--in-place"], ["--check", "--in-place"], ["--check", "-o", "x"]):
        result = golem_main("normalize", str(source), *args)
        assert result.code == 2
        assert_one_line_error(result)


def test_output_into_a_missing_directory(home, golem_main):
    cid = Store(home).create([])
    result = golem_main("export", cid, "-o", "/nonexistent-dir/x.json")
    assert result.code == 2
    assert_one_line_error(result)
    assert "does not exist" in result.err


def test_closed_stdout_pipe_is_quiet(home):
    store = Store(home)
    for n in range(300):
        store.create([Message("user", f"conversation {n}")])
    env = {k: v for k, v in os.environ.items() if k != "FORCE_COLOR"} | {"GOLEM_HOME": str(home)}
    proc = subprocess.Popen([*GOLEM_CMD, "list", "--limit", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    proc.stdout.readline()
    proc.stdout.close()  # like `golem list | head -1`
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err


@pytest.mark.parametrize("args", [["show", "last"], ["export", "last"], ["delete", "last", "--yes"]])
def test_missing_conversation_is_one_line(golem_main, args):
    result = golem_main(*args)
    assert result.code == 1
    assert_one_line_error(result)


def test_main_module_entry_point(home):
    out = subprocess.run([sys.executable, "-m", "golem_cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("golem ")
