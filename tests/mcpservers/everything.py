"""The published reference server, ``@modelcontextprotocol/server-everything`` (npm), for the
tests that check golem against a server it did not write. It is installed from npm into
``tests/mcpservers/.node`` (ignored by git) on first use, or beforehand by ``.ci/run``
(``python -m tests.mcpservers.everything``); it then runs offline on the machine's Node. A test
that needs it skips, saying why, when Node or npm is missing or the registry cannot be reached.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

NODE_DIR = Path(__file__).parent / ".node"
VERSION = "2026.8.31"
PACKAGE = f"@modelcontextprotocol/server-everything@{VERSION}"
ENTRY = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


def install() -> str:
    """Install the server if it is not yet; "" when it is there, else why it cannot be."""
    if shutil.which("node") is None:
        return "node is not installed: server-everything is a Node program"
    if ENTRY.exists():
        return ""
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not installed: server-everything comes from npm"
    NODE_DIR.mkdir(exist_ok=True)
    try:
        done = subprocess.run([npm, "install", "--prefix", str(NODE_DIR), "--no-audit", "--no-fund", PACKAGE],
                              capture_output=True, text=True, timeout=600)  # fmt: skip
    except subprocess.TimeoutExpired:
        return f"npm install {PACKAGE} took more than 10 minutes"
    if done.returncode != 0 or not ENTRY.exists():
        return f"could not install {PACKAGE} from npm: {done.stderr.strip()[-300:]}"
    return ""


def everything_table(**keys: object) -> dict[str, object]:
    """A ``[mcp_servers.NAME]`` table that runs the installed server over stdio (``pytest.skip``
    when it cannot be installed)."""
    import pytest

    why = install()
    if why:
        pytest.skip(why)
    return {"command": "node", "args": [str(ENTRY), "stdio"], **keys}


if __name__ == "__main__":
    problem = install()
    print(f"note: {problem}; the server-everything tests will be skipped" if problem else f"{PACKAGE} installed")
    sys.exit(0)
