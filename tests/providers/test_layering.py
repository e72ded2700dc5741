"""Providers stay a sibling layer: no store, config, CLI or session imports; adapters load lazily."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PROVIDERS = Path(__file__).resolve().parents[2] / "golem_cli" / "providers"
FORBIDDEN = ("golem_cli.store", "golem_cli.config", "golem_cli.cli", "golem_cli.session")


def test_providers_import_only_core_and_themselves() -> None:
    for path in PROVIDERS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                assert not name.startswith(FORBIDDEN), f"{path.name} imports {name}"


def test_importing_providers_and_resolving_loads_no_http_stack() -> None:
    code = "import sys, golem_cli.providers as p; p.default_model({}, {}); print('httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
