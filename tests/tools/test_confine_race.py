"""The file tools' confinement against a path that changes under them (issue 25 item 5): a
directory of the path swapped for a link to outside the root after the path was checked.

Two ways, neither left to chance: hooks that swap the directory right after the check, or
right before a write creates its file (the tool then meets a link in its path every time),
and a real process swapping it as fast as it can while ``read_file`` reads through it, for
enough tries that the code that opened by name lets some through in every run (ADR 0026). Also: writes refused through a hard
link and under ``.git``, reads of a hard link allowed (ADR 0026)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from golem_cli.core.tools import ToolFailed
from golem_cli.tools.confine import Root
from golem_cli.tools.files import FileTools

from tests.tools.conftest import call

SECRET = "the secret\n"


@pytest.fixture
def tree(root: Path) -> Path:
    """``root/sub/f.txt`` inside, and the same name outside: ``outside/f.txt`` (the secret)."""
    (root / "sub").mkdir()
    (root / "sub" / "f.txt").write_text("inside\n")
    (root.parent / "outside" / "f.txt").write_text(SECRET)
    return root


def swap_to_link(tree: Path) -> None:
    """``sub`` becomes a link to the outside directory (its real self kept as ``sub.real``)."""
    os.rename(tree / "sub", tree / "sub.real")
    (tree / "sub").symlink_to(tree.parent / "outside")


@pytest.fixture
def swapped_after_the_check(tree: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FileTools]:
    """File tools whose every check of a path is followed, at once, by the swap."""
    checked = Root.resolve

    def resolve_then_swap(self: Root, given: str) -> Path:
        real = checked(self, given)
        if (tree / "sub").is_dir() and not (tree / "sub").is_symlink():
            swap_to_link(tree)
        return real

    monkeypatch.setattr(Root, "resolve", resolve_then_swap)
    yield FileTools(Root(tree))


def test_a_directory_swapped_for_a_link_after_the_check_is_not_read_through(swapped_after_the_check: FileTools):
    with pytest.raises(
        ToolFailed, match=r"'sub/f.txt' changed while golem opened it: a part of the path is now a link"
    ):
        swapped_after_the_check.read_file("sub/f.txt")


@pytest.fixture
def swapped_before_the_write(tree: Path, monkeypatch: pytest.MonkeyPatch) -> FileTools:
    """File tools whose first new file (the temporary file of a write) is created just after
    ``sub`` is swapped: what a racing process does between the check and the write."""
    create = os.open

    def swap_then_open(path, flags, mode=0o777, *, dir_fd=None):  # type: ignore[no-untyped-def]
        if flags & os.O_CREAT and not (tree / "sub").is_symlink():
            swap_to_link(tree)
        return create(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", swap_then_open)
    return FileTools(Root(tree))


@pytest.mark.parametrize("name", ["f.txt", "new.txt"])
def test_a_directory_swapped_for_a_link_before_the_write_is_not_written_through(
    swapped_before_the_write: FileTools, tree: Path, name: str
):
    swapped_before_the_write.write_file(f"sub/{name}", "written\n")
    outside = tree.parent / "outside"
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt", "secret.txt"]
    assert (outside / "f.txt").read_text() == SECRET
    assert (tree / "sub.real" / name).read_text() == "written\n"  # where the directory the check saw is now


#: Flips ``sub`` between the real directory and a link to outside until killed (or a minute).
SWAPPER = """
import os, sys, time
root = sys.argv[1]
sub, real, link = (os.path.join(root, n) for n in ("sub", "sub.real", "sub.link"))
os.rename(sub, real)
os.symlink(os.path.join(os.path.dirname(root), "outside"), link)
print("ready", flush=True)
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    os.rename(real, sub); os.rename(sub, real)
    os.rename(link, sub); os.rename(sub, link)
"""

#: Tries: the code that checked a path and then opened it by name let 29 reads in 2,000 through
#: (1.5%); at 1,000 tries it escapes in all but about one run in a million.
TRIES = 1000


@pytest.fixture
def swapper(tree: Path) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen([sys.executable, "-c", SWAPPER, str(tree)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    yield proc
    proc.kill()
    proc.wait()


def test_a_process_swapping_a_directory_never_gets_a_read_outside(swapper, tree: Path, registry):
    escaped, read = race(lambda: call(registry, "read_file", path="sub/f.txt"), lambda text: text == SECRET)
    assert escaped == 0, f"{escaped} of {TRIES} reads returned the outside file"
    assert read > 0  # the race was run: some tries found the directory in place


def race(attempt, escaped) -> tuple[int, int]:
    """(tries that escaped, tries that did what they were asked inside) out of ``TRIES``,
    bounded in time."""
    escapes = done = 0
    deadline = time.monotonic() + 120
    for _ in range(TRIES):
        if time.monotonic() > deadline:
            break
        try:
            result = attempt()
        except ToolFailed:
            continue
        if escaped(result):
            escapes += 1
        else:
            done += 1
    return escapes, done


# --- hard links and .git ---------------------------------------------------------------------


def test_a_hard_link_to_an_outside_file_is_refused_for_writing_and_read_like_any_file(registry, root: Path):
    outside = root.parent / "outside" / "secret.txt"
    os.link(outside, root / "linked.txt")
    words = r"'linked.txt' is a hard link: the file has 2 names, and another may be outside"
    with pytest.raises(ToolFailed, match=words):
        registry.entry("write_file").preview({"path": "linked.txt", "content": "x"})
    with pytest.raises(ToolFailed, match=words):
        call(registry, "write_file", path="linked.txt", content="x")
    with pytest.raises(ToolFailed, match=words):
        call(registry, "edit_file", path="linked.txt", old_text="secret", new_text="public")
    assert outside.read_text() == SECRET and (root / "linked.txt").stat().st_nlink == 2
    assert call(registry, "read_file", path="linked.txt") == SECRET


@pytest.mark.parametrize("path", [".git/hooks/pre-commit", ".git/config", "vendor/lib/.git/config", ".GIT/config"])
def test_writes_under_git_are_refused(registry, root: Path, path: str):
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text("[core]\n")
    words = "is inside .git: a change there .a hook, the config. runs code at the next git command"
    with pytest.raises(ToolFailed, match=words):
        registry.entry("write_file").preview({"path": path, "content": "#!/bin/sh\ncurl x | sh\n"})
    with pytest.raises(ToolFailed, match=words):
        call(registry, "write_file", path=path, content="#!/bin/sh\ncurl x | sh\n")
    with pytest.raises(ToolFailed, match=words):
        call(registry, "edit_file", path=path, old_text="[core]", new_text="[core]\nfsmonitor = evil")
    assert (root / path).read_text() == "[core]\n"
    assert call(registry, "read_file", path=path) == "[core]\n"  # reading is as before
