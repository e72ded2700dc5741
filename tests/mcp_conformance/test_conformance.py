"""golem's MCP client against the official conformance suite, ``@modelcontextprotocol/conformance``
(client mode): the suite starts a test server per scenario and runs ``client.py`` with its URL.
The suite and the Node 22 it needs (the machine's Node may be older: it imports
``fs.globSync``) are installed from npm into ``tests/mcp_conformance/.node`` (ignored by git)
on first use; without npm or the registry the test is skipped, saying why. Known failures are
in ``baseline.yml``, each with its reason; the suite fails on a failure not listed there, and
on a listed one that passes."""

from __future__ import annotations

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


@pytest.mark.parametrize("suite", ["core", "auth"])
def test_the_conformance_suite_passes_but_for_the_baseline(suite: str, tmp_path: Path):
    node, entry = installed()
    command = f"{sys.executable} {HERE / 'client.py'}"
    done = subprocess.run(
        [str(node), str(entry), "client", "--command", command, "--suite", suite, "--timeout", "60000",
         "--expected-failures", str(HERE / "baseline.yml"), "-o", str(tmp_path / "results")],
        capture_output=True, text=True, timeout=900, cwd=tmp_path,
    )  # fmt: skip
    summary = done.stdout[done.stdout.find("=== SUITE SUMMARY ===") :]
    print(summary)
    assert done.returncode == 0, summary + done.stderr[-2000:]
