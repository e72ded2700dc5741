"""config.toml is read as golem reads every other file it did not write: a regular file of a
bounded size, its TOML bounded in depth; anything else is one line and exit code 1 (a config
error), at once. Through the real ``golem`` entry point."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest

GOLEM = os.path.join(os.path.dirname(sys.executable), "golem")
#: Far above what golem needs, far below what reading /dev/zero or a sparse file whole asks for.
MEMORY = 2 << 30


def _bounded() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def golem(home, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith(("GOLEM_", "OLLAMA"))}
    return subprocess.run(
        [GOLEM, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        env=env | {"GOLEM_HOME": str(home)}, preexec_fn=_bounded,
    )  # fmt: skip


def refused(done: subprocess.CompletedProcess[str], *words: str) -> str:
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    (line,) = done.stderr.splitlines()
    assert line.startswith("golem: ") and "Traceback" not in line and "internal error" not in line, line
    for word in words:
        assert word in line, line
    return line


@pytest.mark.parametrize("command", [["models"], ["ask", "hi"], ["chat"], ["tools"]])
def test_a_fifo_is_refused_at_once(tmp_path, command):
    path = tmp_path / "config.toml"
    os.mkfifo(path)
    line = refused(golem(tmp_path, *command), str(path), "FIFO")
    assert "not a configuration file" in line


def test_a_link_to_dev_zero_is_refused(tmp_path):
    (tmp_path / "config.toml").symlink_to("/dev/zero")
    refused(golem(tmp_path, "models"), "config.toml", "a device")


def test_a_directory_is_refused(tmp_path):
    (tmp_path / "config.toml").mkdir()
    refused(golem(tmp_path, "models"), "config.toml", "a directory")


def test_a_huge_file_is_refused_without_reading_it(tmp_path):
    path = tmp_path / "config.toml"
    with path.open("wb") as f:
        f.truncate(4 << 30)  # sparse: 4 GiB of NUL bytes that take no disk
    refused(golem(tmp_path, "ask", "hi"), str(path), "too large", "MiB")


def test_a_valid_file_over_the_limit_is_refused(tmp_path):
    from golem_cli.config.settings import MAX_CONFIG_BYTES

    path = tmp_path / "config.toml"
    path.write_text('model = "offline:echo"\n' + ("# padding\n" * (MAX_CONFIG_BYTES // 10 + 1)))
    refused(golem(tmp_path, "models"), str(path), "too large")
    path.write_text('model = "offline:echo"\n' + ("# padding\n" * (MAX_CONFIG_BYTES // 20)))
    done = golem(tmp_path, "models")
    assert done.returncode == 0 and "default model: offline:echo (model in" in done.stdout


@pytest.mark.parametrize("nested", ["a = " + "[" * 5000 + "]" * 5000, "a = " + "{b = " * 5000 + "1" + "}" * 5000])
def test_deeply_nested_toml_is_refused(tmp_path, nested):
    path = tmp_path / "config.toml"
    path.write_text(nested + "\n")
    refused(golem(tmp_path, "models"), str(path), "nested too deeply")
