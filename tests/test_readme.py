"""The README's lists stay true to the tree: every benchmark script is listed with a line on
what it measures, and nothing listed is missing."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_benchmark_script_is_listed_with_what_it_measures() -> None:
    readme = (ROOT / "README.md").read_text()
    listed = dict(re.findall(r"^  - `(\w+\.py)`: (\S.*)$", readme, re.MULTILINE))
    scripts = {path.name for path in (ROOT / "benchmarks").glob("*.py") if not path.name.startswith("_")}
    assert set(listed) == scripts
    assert all(len(what.split()) >= 5 for what in listed.values()), listed


def test_every_slash_command_has_a_row_in_the_readme_with_its_arguments() -> None:
    """/context and /cost were in /help and missing from the README's table of commands; /trim's
    row lacked ``stride K`` and /history's its flags."""
    from golem_cli.cli.repl.slash import COMMANDS

    readme = (ROOT / "README.md").read_text()
    usages = [line.split("`")[1].replace("\\|", "|") for line in readme.splitlines() if line.startswith("| `/")]
    rows = {usage.split()[0]: usage for usage in usages}
    assert {name: usage for name, (usage, _) in COMMANDS.items()} == {name: rows.get(name) for name in COMMANDS}
