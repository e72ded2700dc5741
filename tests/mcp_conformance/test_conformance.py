"""golem's MCP client against the official conformance suite, ``@modelcontextprotocol/conformance``
(client mode): the suite starts a test server per scenario and runs a client with its URL: here
``relay.py``, which hands it to golem's client (``client.py``) running in this process
(``host.py``), so a scenario costs no import of golem and the SDK of its own. The suite and the
Node 22 it needs (the machine's Node may be older: it imports ``fs.globSync``) are installed from
npm into ``tests/mcp_conformance/.node`` (ignored by git) on first use; without npm or the
registry the test is skipped, saying why. Known failures are in ``baseline.yml``, each with its
reason; a scenario fails on a failure not listed there, and on a listed one that passes. Each
scenario of the ``core`` and ``auth`` suites is its own test (``auth`` is a part of ``core``).
The ``auth`` scenarios are run by one ``--suite auth`` (at once, by one Node process, once per
test process), each test reading its own scenario's checks; the others run one at a time, each
by its own test: ``sse-retry`` measures time, which scenarios running beside it would stretch.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
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


@pytest.fixture(scope="session")
def host() -> Iterator[str]:
    """golem's conformance client, serving ``relay.py`` from this process (``host.py``)."""
    from tests.mcp_conformance.host import client_host  # golem's MCP layer and the SDK: seconds, once

    with client_host() as path:
        yield path


def run_suite(node: Path, entry: Path, selection: list[str], out: Path, host: str) -> str:
    """The suite run by Node with ``relay.py`` as the client (``selection``: ``--scenario NAME``
    or ``--suite NAME``), its results in ``out``; what it printed."""
    done = subprocess.run([str(node), str(entry), "client", "--command", f"{sys.executable} {HERE / 'relay.py'}",
                           *selection, "--timeout", "60000", "-o", str(out)], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "GOLEM_CONFORMANCE_HOST": host})  # fmt: skip
    return f"{done.stdout[-500:]} {done.stderr[-500:]}"


def checked(folder: Path | None, said: str) -> tuple[int, int, int, str]:
    """Checks passed, failed and warned in one scenario's results folder, and its failures in words."""
    checks = [c for f in folder.rglob("checks.json") for c in json.loads(f.read_text())] if folder else []
    status = [c["status"] for c in checks]
    failures = "; ".join(f"{c['id']}: {c.get('errorMessage') or c.get('description')}" for c in checks
                         if c["status"] in ("FAILURE", "WARNING"))  # fmt: skip
    if not checks:
        failures = f"no checks ran: {said}"
    return status.count("SUCCESS"), status.count("FAILURE"), status.count("WARNING"), failures


@pytest.fixture(scope="session")
def auth_suite(tmp_path_factory: pytest.TempPathFactory, host: str) -> tuple[Path, str]:
    """``--suite auth``, run once in this test process: its results folder and what it printed."""
    node, entry = installed()
    out = tmp_path_factory.mktemp("conformance-auth")
    return out, run_suite(node, entry, ["--suite", "auth"], out, host)


def scenario_folder(out: Path, scenario: str) -> Path | None:
    """Where a suite run left ``scenario``'s results (``NAME-TIMESTAMP``), if it ran."""
    parent, _, leaf = f"{out}/{scenario}".rpartition("/")
    found = [d for d in Path(parent).glob(f"{leaf}-*") if re.fullmatch(re.escape(leaf) + r"-\d{4}-\d\d-\d\dT[\dTZ-]+", d.name)]
    return found[0] if len(found) == 1 else None


#: Every scenario of the two suites, once: ``auth`` is a part of ``core``.
SCENARIOS = list(dict.fromkeys(SUITES["core"] + SUITES["auth"]))


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_conformance_scenario_passes_but_for_the_baseline(scenario: str, tmp_path: Path, request: pytest.FixtureRequest):
    node, entry = installed()
    if scenario in SUITES["auth"]:
        out, said = request.getfixturevalue("auth_suite")
        folder = scenario_folder(out, scenario)
    else:
        said = run_suite(node, entry, ["--scenario", scenario], tmp_path, request.getfixturevalue("host"))
        folder = tmp_path
    passed, failed, warned, words = checked(folder, said)
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
