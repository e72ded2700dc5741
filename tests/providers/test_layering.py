"""Providers stay a sibling layer: no store, CLI or session imports, and of the config layer only
its schema (the typed tables it reads); adapters load lazily."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PROVIDERS = Path(__file__).resolve().parents[2] / "golem_cli" / "providers"
FORBIDDEN = ("golem_cli.store", "golem_cli.config", "golem_cli.cli", "golem_cli.session")
ALLOWED = ("golem_cli.config.schema",)


def test_providers_import_only_core_and_themselves() -> None:
    for path in PROVIDERS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                assert name in ALLOWED or not name.startswith(FORBIDDEN), f"{path.name} imports {name}"


def test_importing_providers_and_resolving_loads_no_http_stack() -> None:
    """Choosing the default model loads only the providers' facts. Nor does a chat's check of its model (``lazy``: options checked, the adapter built at its
    first use) load the wire modules and the codec behind them: it runs beside the prompt."""
    code = (
        "import sys; from golem_cli.providers import keys; keys.default_model({}, {})\n"
        "print(sorted(m for m in sys.modules if m.startswith('golem_cli.providers.')))\n"
        "from golem_cli.providers import resolve as p; print('httpx' in sys.modules)\n"
        "p.resolve('openai:gpt-4o-mini', env={'OPENAI_API_KEY': 'k'}, lazy=True)\n"
        "p.resolve('anthropic:claude-sonnet-4-5', env={'ANTHROPIC_API_KEY': 'k'}, lazy=True)\n"
        "print(sorted(m for m in sys.modules if m == 'httpx' or m.endswith('.wire') or m.startswith('golem_cli.core.codec')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    chosen, plain, lazy = out.stdout.splitlines()
    # the default model is chosen from the facts alone: no endpoint, option or adapter module
    assert chosen == str(sorted(f"golem_cli.providers.{m}" for m in ("anthropic", "facts", "keys", "openai")))
    assert plain == "False"
    assert lazy == "[]", f"a lazy resolve loaded {lazy}"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PROVIDERS.parents[1]).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def provider_import_graph() -> dict[str, set[str]]:
    """Module -> the golem_cli.providers modules it imports anywhere (lazy imports included)."""
    modules = {_module_name(p): p for p in PROVIDERS.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:  # a submodule, else the module
                subs = {f"{node.module}.{a.name}" for a in node.names}
                targets.update(subs & modules.keys() or {node.module})
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def test_no_import_cycles_among_providers_modules() -> None:
    """resolve.py and the adapters once imported each other, held apart by a lazy import."""
    graph = provider_import_graph()
    assert graph["golem_cli.providers.resolve"]  # the scan sees imports
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        assert node not in path, " -> ".join([*path[path.index(node) :], node])
        if node in done:
            return
        for target in sorted(graph[node]):
            visit(target, [*path, node])
        done.add(node)

    for module in sorted(graph):
        visit(module, [])
