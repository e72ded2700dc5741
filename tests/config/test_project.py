"""A project's ``.golem/config.toml`` (``config.project``): read when there is one; a chat in a
directory without one pays nothing for it (neither the TOML parser nor the hash is loaded)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from golem_cli.config.project import PROJECT_FILE, read_project_rules


def test_a_project_file_is_read_with_its_digest(tmp_path: Path):
    path = tmp_path / PROJECT_FILE
    path.parent.mkdir(parents=True)
    path.write_text('tools = ["read"]\nallow = ["shell:git status"]\nmodel = "x"\n')
    rules = read_project_rules(tmp_path)
    assert rules is not None and rules.tools == ("read",) and rules.allow == ("shell:git status",)
    assert len(rules.digest) == 64 and rules.problems and "model is not a key" in rules.problems[0]


def test_no_project_file_loads_neither_the_parser_nor_the_hash(tmp_path: Path):
    code = (
        "import sys, pathlib\n"
        "from golem_cli.config.project import read_project_rules\n"
        "assert read_project_rules(pathlib.Path('.')) is None\n"
        "print(sorted(m for m in ('tomllib', '_hashlib') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout == "[]\n"
