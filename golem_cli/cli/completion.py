"""Shell completion scripts for ``completions/``, generated from the CLI itself.

The scripts are small shims: completions are computed by ``golem`` at tab time
(``_GOLEM_COMPLETE=complete_<shell>``), so they stay right as commands change. Regenerate
with ``python -m golem_cli.cli.completion``; tests/repl/test_completions.py keeps the files
current.
"""

from __future__ import annotations

from pathlib import Path

SHELLS = {"bash": "golem.bash", "zsh": "_golem", "fish": "golem.fish"}
COMPLETE_VAR = "_GOLEM_COMPLETE"


def script(shell: str) -> str:
    from typer._completion_shared import get_completion_script

    return get_completion_script(prog_name="golem", complete_var=COMPLETE_VAR, shell=shell).strip() + "\n"


def write_all(directory: Path) -> list[Path]:
    written = []
    for shell, name in SHELLS.items():
        path = directory / name
        path.write_text(script(shell), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write_all(Path(__file__).resolve().parents[2] / "completions"):
        print(path)
