"""The layers import only downward: core <- providers | store | config <- session <- cli.

An AST scan of every module's imports, including imports inside functions, so a lazy import
cannot sneak a dependency in either.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import golem_cli.core
import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "golem_cli"

# layer -> golem_cli layers and third-party top-level packages it must not import
FORBIDDEN = {
    "core": {"cli", "session", "providers", "store", "config", "typer", "rich", "prompt_toolkit", "httpx",
             "httpx_sse", "platformdirs", "filelock", "pydantic"},
    "providers": {"cli", "session", "store", "config", "typer", "rich", "prompt_toolkit"},
    "store": {"cli", "session", "providers", "config", "typer", "rich", "prompt_toolkit", "httpx"},
    "config": {"cli", "session", "providers", "store", "typer", "rich", "prompt_toolkit", "httpx"},
    "session": {"cli", "typer", "rich", "prompt_toolkit"},
}  # fmt: skip


def layer_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0].removesuffix(".py") if len(rel.parts) > 1 or rel.stem == "session" else ""


def imported_names(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def violations(path: Path, layer: str | None = None) -> list[str]:
    banned = FORBIDDEN.get(layer_of(path) if layer is None else layer, set())
    found = []
    for name in imported_names(path):
        parts = name.split(".")
        inside = parts[1:] if parts[0] == "golem_cli" else None
        for rule in banned:
            if inside is not None and ".".join(inside).startswith(rule):
                found.append(name)
            elif inside is None and parts[0] == rule:
                found.append(name)
    return found


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_only_go_down(path):
    assert violations(path) == []


def test_the_scan_catches_a_violation(tmp_path):
    assert layer_of(PACKAGE / "core" / "codec.py") == "core"
    assert layer_of(PACKAGE / "session.py") == "session"
    source = tmp_path / "x.py"
    source.write_text("import msgspec\ndef f():\n    import rich\n    from golem_cli.cli import app\n")
    assert sorted(violations(source, "core")) == ["golem_cli.cli", "rich"]
    assert sorted(violations(source, "session")) == ["golem_cli.cli", "rich"]


def test_core_public_api_resolves():
    for name in golem_cli.core.__all__:
        assert getattr(golem_cli.core, name) is not None
    with pytest.raises(AttributeError):
        golem_cli.core.no_such_name  # noqa: B018


def test_importing_the_codec_loads_no_run_loop():
    import subprocess
    import sys

    code = "import sys, golem_cli.core.codec; print(sorted(m for m in sys.modules if m.startswith(('golem_cli', 'asyncio'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "golem_cli.core.agent" not in out and "'asyncio'" not in out
    importlib.import_module("golem_cli.core.agent")
