"""Every file tool stays inside its root: ``..``, absolute paths and links leading out are
refused with a failed result naming the root, and the outside file is never touched."""

from __future__ import annotations

from pathlib import Path

import pytest
from golem_cli.core.tools import ToolFailed
from golem_cli.tools.confine import Root

from tests.tools.conftest import call

OUTSIDE_PATHS = ["../outside/secret.txt", "sub/../../outside/secret.txt", "{outside}/secret.txt", "/etc/passwd"]


@pytest.mark.parametrize("given", OUTSIDE_PATHS)
@pytest.mark.parametrize("tool", ["read_file", "write_file", "edit_file", "list_files", "search_files"])
def test_paths_outside_the_root_are_refused(registry, root: Path, given: str, tool: str):
    given = given.format(outside=root.parent / "outside")
    args = {
        "read_file": {"path": given},
        "write_file": {"path": given, "content": "owned"},
        "edit_file": {"path": given, "old_text": "the", "new_text": "a"},
        "list_files": {"path": given},
        "search_files": {"pattern": "secret", "path": given},
    }[tool]
    with pytest.raises(ToolFailed, match="outside the directory the file tools may use") as info:
        call(registry, tool, **args)
    assert str(root) in info.value.reason
    assert (root.parent / "outside" / "secret.txt").read_text() == "the secret\n"


def test_links_leading_out_are_refused_and_links_inside_are_fine(registry, root: Path):
    outside = root.parent / "outside"
    (root / "to_secret").symlink_to(outside / "secret.txt")
    (root / "to_outside_dir").symlink_to(outside, target_is_directory=True)
    (root / "dangling").symlink_to(outside / "new.txt")  # does not exist yet
    (root / "inner").symlink_to(root / "hello.txt")
    for path in ("to_secret", "to_outside_dir/secret.txt"):
        with pytest.raises(ToolFailed, match="outside"):
            call(registry, "read_file", path=path)
    with pytest.raises(ToolFailed, match="outside"):
        call(registry, "write_file", path="dangling", content="escaped")
    with pytest.raises(ToolFailed, match="outside"):
        call(registry, "write_file", path="to_secret", content="escaped")
    assert not (outside / "new.txt").exists()
    assert (outside / "secret.txt").read_text() == "the secret\n"
    assert call(registry, "read_file", path="inner") == "hello\nworld\n"
    # the walk neither follows the directory link nor lists the link leading out
    listing = call(registry, "list_files")
    assert "to_outside_dir" not in listing and "to_secret" not in listing and "inner" in listing
    assert "no matches" in call(registry, "search_files", pattern="secret")


def test_absolute_paths_inside_the_root_are_fine(registry, root: Path):
    assert call(registry, "read_file", path=str(root / "hello.txt")) == "hello\nworld\n"


def test_root_resolution_edge_cases(tmp_path: Path, monkeypatch):
    root = Root(tmp_path)
    assert root.resolve("") == tmp_path.resolve() and root.resolve(".") == tmp_path.resolve()
    assert root.show(root.resolve("a/b/../c")) == "a/c"
    with pytest.raises(ToolFailed, match="NUL"):
        root.resolve("a\x00b")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(ToolFailed):
        root.resolve("loop/x")
    monkeypatch.chdir(tmp_path)
    assert Root(".").path == tmp_path.resolve()
