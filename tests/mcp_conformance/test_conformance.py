"""golem's MCP client against the official conformance suite, ``@modelcontextprotocol/conformance``
(client mode): the suite starts a test server per scenario and runs ``client.py`` with its URL.
The suite and the Node 22 it needs (the machine's Node may be older: it imports
``fs.globSync``) are installed from npm into ``tests/mcp_conformance/.node`` (ignored by git)
on first use; without npm or the registry the test is skipped, saying why. Known failures are
in ``baseline.yml``, each with its reason; a scenario fails on a failure not listed there, and on
a listed one that passes. Each scenario of the ``core`` and ``auth`` suites is its own test, run
once (``auth`` is a part of ``core``), so the test workers share them out; ``--suite`` would run
them all at once, and on a busy machine the timing scenario, ``sse-retry``, then measures the
machine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
HERE = Path(__file__).parent
NODE_DIR = HERE / ".node"
SUITE_VERSION = "0.1.16"
PACKAGES = ["node@22", f"@modelcontextprotocol/conformance@{SUITE_VERSION}"]


def installed() -> tuple[Path, Path]:
    """Node 22 and the suite's entry point, installed if they are not yet; skips when they cannot be."""
    node = NODE_DIR / "node_modules" / ".bin" / "node"
    suite = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    if node.exists() and suite.exists():
        return node, suite
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: the MCP conformance suite comes from npm")
    NODE_DIR.mkdir(exist_ok=True)
    done = subprocess.run([npm, "install", "--prefix", str(NODE_DIR), "--no-audit", "--no-fund", *PACKAGES],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    if done.returncode != 0 or not (node.exists() and suite.exists()):
        pytest.skip(f"could not install {' '.join(PACKAGES)} from npm: {done.stderr.strip()[-300:]}")
    return node, suite


AUTH = [
    "auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3", "auth/basic-cimd",
    "auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported", "auth/scope-omitted-when-undefined",
    "auth/scope-step-up", "auth/scope-retry-limit", "auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none", "auth/pre-registration",
]  # fmt: skip
#: The suites' scenarios in version 0.1.16 (``conformance client --suite NAME`` runs these).
SUITES = {"core": ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry", *AUTH],
          "auth": AUTH}  # fmt: skip


def baseline() -> set[str]:
    lines = (HERE / "baseline.yml").read_text().splitlines()
    return {line.strip()[2:].strip() for line in lines if line.strip().startswith("- ")}


def run_scenario(node: Path, entry: Path, scenario: str, out: Path) -> tuple[int, int, int, str]:
    """Checks passed, failed and warned in one scenario, and its failures in words."""
    command = f"{sys.executable} {HERE / 'client.py'}"
    done = subprocess.run([str(node), str(entry), "client", "--command", command, "--scenario", scenario,
                           "--timeout", "60000", "-o", str(out)], capture_output=True, text=True, timeout=300)  # fmt: skip
    checks = [c for f in out.rglob("checks.json") for c in json.loads(f.read_text())]
    status = [c["status"] for c in checks]
    failures = "; ".join(f"{c['id']}: {c.get('errorMessage') or c.get('description')}" for c in checks
                         if c["status"] in ("FAILURE", "WARNING"))  # fmt: skip
    if not checks:
        failures = f"no checks ran: {done.stdout[-500:]} {done.stderr[-500:]}"
    return status.count("SUCCESS"), status.count("FAILURE"), status.count("WARNING"), failures


#: Every scenario of the two suites, once: ``auth`` is a part of ``core``.
SCENARIOS = list(dict.fromkeys(SUITES["core"] + SUITES["auth"]))


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_conformance_scenario_passes_but_for_the_baseline(scenario: str, tmp_path: Path):
    node, entry = installed()
    passed, failed, warned, words = run_scenario(node, entry, scenario, tmp_path)
    print(f"{scenario}: {passed} passed, {failed} failed, {warned} warnings {words}")
    clean = failed == 0 and warned == 0 and passed > 0
    if scenario in baseline():
        assert not clean, f"{scenario} passes now; take it out of baseline.yml"
    else:
        assert clean, f"{scenario}: {words}"


@pytest.mark.parametrize("answer", ["callback", "paste"])
def test_golem_mcp_login_signs_in_and_the_tokens_serve_the_next_command(answer: str, tmp_path: Path):
    """The real ``golem mcp login`` against the suite's authorization server (``login.py``):
    the answer comes back to the loopback callback, or is pasted; ``mcp list`` then reaches the
    server with the stored tokens and ``mcp logout`` forgets them."""
    node, entry = installed()
    done = subprocess.run(
        [str(node), str(entry), "client", "--command", f"{sys.executable} {HERE / 'login.py'}", "--scenario",
         "auth/metadata-default", "--timeout", "180000", "-o", str(tmp_path)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "LOGIN_BY": answer},
    )  # fmt: skip
    said = "\n".join(f.read_text() for f in tmp_path.rglob("stdout.txt"))
    assert done.returncode == 0, done.stdout[-3000:] + said
    assert "tokens 0o600" in said and "Signed out of remote" in said
