"""The layers import only downward: core <- providers | store | config | tools <- session <- cli,
and no golem_cli modules import each other in a circle. Of the sibling layers, one module is
read by others: ``config/schema.py``, config.toml's declaration, whose typed tables the provider
and tools layers take (ADR 0019); it imports nothing of golem.

An AST scan of every module's imports, including imports inside functions and under
``TYPE_CHECKING``, so a lazy import cannot sneak a dependency or a circle in either.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "golem_cli"

# layer -> golem_cli layers and third-party top-level packages it must not import
#: The MCP SDK and what only it uses: about a second to import, so only the two modules of the
#: tools layer that run a tool server's connection may import them (test below).
MCP_SDK = {"mcp", "mcp_types", "httpx2", "anyio", "pydantic"}  # pydantic: the models the SDK speaks in
MCP_SDK_MODULES = {"tools/mcp/connection.py", "tools/mcp/transport.py", "tools/mcp/http.py", "tools/mcp/oauth.py"}

FORBIDDEN = {
    "core": {"cli", "session", "providers", "store", "config", "tools", "typer", "rich", "prompt_toolkit", "httpx",
             "httpx_sse", "platformdirs", "filelock", "pathspec", *MCP_SDK},
    "providers": {"cli", "session", "store", "config", "tools", "typer", "rich", "prompt_toolkit", *MCP_SDK},
    "store": {"cli", "session", "providers", "config", "tools", "typer", "rich", "prompt_toolkit", "httpx", *MCP_SDK},
    "config": {"cli", "session", "providers", "store", "tools", "typer", "rich", "prompt_toolkit", "httpx", *MCP_SDK},
    "tools": {"cli", "session", "providers", "store", "config", "typer", "rich", "prompt_toolkit"},
    "session": {"cli", "typer", "rich", "prompt_toolkit", *MCP_SDK},
    "cli": MCP_SDK,
}  # fmt: skip
#: What a layer may import although its layer is forbidden above.
SHARED = {"providers": {"config.schema"}, "tools": {"config.schema"}}


def layer_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    if len(rel.parts) == 1 and rel.stem in ("session", "compacting"):  # the session and its compaction side
        return "session"
    return rel.parts[0].removesuffix(".py") if len(rel.parts) > 1 else ""


def imported_names(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def violations(path: Path, layer: str | None = None) -> list[str]:
    layer = layer_of(path) if layer is None else layer
    banned = FORBIDDEN.get(layer, set())
    found = []
    for name in imported_names(path):
        parts = name.split(".")
        inside = parts[1:] if parts[0] == "golem_cli" else None
        if inside is not None and ".".join(inside) in SHARED.get(layer, ()):
            continue
        for rule in banned:
            if inside is not None and ".".join(inside).startswith(rule):
                found.append(name)
            elif inside is None and parts[0] == rule:
                found.append(name)
    return found


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_only_go_down(path):
    assert violations(path) == []


@pytest.mark.parametrize("path", sorted((PACKAGE / "tools").rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_only_the_connection_modules_import_the_mcp_sdk(path):
    sdk = {n for n in imported_names(path) if n.split(".")[0] in MCP_SDK}
    if str(path.relative_to(PACKAGE)) in MCP_SDK_MODULES:
        return
    assert sdk == set()
    # ...and nothing else imports those two modules at its top level (only inside a function)
    top = ast.parse(path.read_text(encoding="utf-8")).body
    names = {n.module for n in top if isinstance(n, ast.ImportFrom) and n.module}
    assert not names & {"golem_cli.tools.mcp.connection", "golem_cli.tools.mcp.transport", "golem_cli.tools.mcp.http"}


def test_a_stdio_server_can_start_before_the_sdk_is_imported():
    """``transport`` spawns the process with anyio alone, so a chat imports the SDK while the
    server starts (``McpSource.start``)."""
    import subprocess
    import sys

    code = ("import sys, golem_cli.tools.mcp.transport, golem_cli.tools.mcp.source, golem_cli.tools.toolbox; "
            "print(sorted(m for m in ('mcp', 'mcp_types', 'httpx2', 'pydantic') if m in sys.modules))")  # fmt: skip
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "[]"


def test_the_shared_schema_imports_nothing_of_golem_and_nothing_heavy():
    names = imported_names(PACKAGE / "config" / "schema.py")
    assert {n.split(".")[0] for n in names} <= {"__future__", "typing", "msgspec"}, names


def test_the_scan_catches_a_violation(tmp_path):
    assert layer_of(PACKAGE / "core" / "codec.py") == "core"
    assert layer_of(PACKAGE / "session.py") == "session"
    source = tmp_path / "x.py"
    source.write_text("import msgspec\ndef f():\n    import rich\n    from golem_cli.cli import app\n")
    assert sorted(violations(source, "core")) == ["golem_cli.cli", "rich"]
    assert sorted(violations(source, "session")) == ["golem_cli.cli", "rich"]
    source.write_text("from golem_cli.config.schema import ProviderTable\nfrom golem_cli.config import settings\n")
    assert violations(source, "providers") == ["golem_cli.config"] and violations(source, "store") != []


# --- no import circles ------------------------------------------------------------------------

def module_names(package: Path) -> dict[str, Path]:
    """Dotted name -> file, for every module of ``package`` (a directory with __init__.py)."""
    names = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports, wherever the import statement is.

    ``from pkg import name`` is an edge to the submodule ``pkg.name`` when there is one, else to
    ``pkg`` itself (the parent packages a submodule import runs are not edges: they are not
    what the importer depends on)."""
    modules = module_names(package)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circles():
    assert [sorted(c) for c in import_cycles(import_graph(PACKAGE))] == []


def test_the_cycle_scan_catches_lazy_and_type_only_circles(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from pkg.sub.b import B\n")
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import C\n")
    (pkg / "c.py").write_text("import pkg.a\n")
    (pkg / "d.py").write_text("from pkg.sub import B\n")  # the package, not a circle
    graph = import_graph(pkg)
    assert graph["pkg.a"] == {"pkg.sub.b"} and graph["pkg.sub.b"] == {"pkg.c"} and graph["pkg.d"] == {"pkg.sub"}
    assert import_cycles(graph) == [{"pkg.a", "pkg.sub.b", "pkg.c"}]
    (pkg / "c.py").write_text("")
    assert import_cycles(import_graph(pkg)) == []


def test_importing_the_codec_loads_no_run_loop():
    import subprocess
    import sys

    code = "import sys, golem_cli.core.codec.history; print(sorted(m for m in sys.modules if m.startswith(('golem_cli', 'asyncio'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "golem_cli.core.agent" not in out and "'asyncio'" not in out
    importlib.import_module("golem_cli.core.agent")


def test_the_error_tree_loads_nothing_heavy():
    """Every command imports the error tree (cli/errors.py); ``golem --help`` needs no msgspec."""
    import subprocess
    import sys

    code = "import sys, golem_cli.cli.errors; print(sorted(m for m in sys.modules if m.startswith('msgspec')))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


# --- short, simple functions ------------------------------------------------------------------

MAX_LINES = 60  # a function a reader takes in at once
MAX_COMPLEXITY = 15  # radon's cyclomatic complexity


def long_or_complex(source: str) -> list[str]:
    """The functions and methods of ``source`` over ``MAX_LINES`` lines (the ``def`` line to the
    last) or over ``MAX_COMPLEXITY``: ``name lines=N cc=M`` each."""
    from radon.complexity import cc_visit
    from radon.visitors import Function

    return [f"{block.fullname} lines={block.endline - block.lineno + 1} cc={block.complexity}"
            for block in cc_visit(source)
            if isinstance(block, Function)
            and (block.endline - block.lineno + 1 > MAX_LINES or block.complexity > MAX_COMPLEXITY)]  # fmt: skip


def test_no_function_is_over_60_lines_or_complexity_15():
    found = [f"{path.relative_to(PACKAGE)}: {row}" for path in sorted(PACKAGE.rglob("*.py"))
             for row in long_or_complex(path.read_text(encoding="utf-8"))]  # fmt: skip
    assert found == []


def test_the_length_scan_catches_a_long_or_complex_function():
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES - 1))
    assert long_or_complex(f"def f():\n{body}") == []
    assert long_or_complex(f"def f():\n{body}    return x0\n") == ["f lines=61 cc=1"]
    def method(branches: int) -> str:
        return "class C:\n    def m(self, x):\n" + "".join(f"        if x == {i}:\n            return {i}\n" for i in range(branches))

    assert long_or_complex(method(MAX_COMPLEXITY - 1)) == []
    assert long_or_complex(method(MAX_COMPLEXITY)) == ["C.m lines=31 cc=16"]


MAX_MODULES = 20  # a folder a reader can take in at a glance (``__init__.py`` counted)


def test_no_folder_holds_more_than_20_modules():
    folders = [PACKAGE, *(p for p in PACKAGE.rglob("*") if p.is_dir() and p.name != "__pycache__")]
    crowded = {str(d.relative_to(PACKAGE)): n for d in folders if (n := len(list(d.glob("*.py")))) > MAX_MODULES}
    assert crowded == {}
