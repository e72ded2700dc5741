"""``golem mcp login`` as a person uses it, for the conformance suite's authorization scenarios:
``python tests/mcp_conformance/login.py SERVER_URL`` configures the server in a fresh
GOLEM_HOME, runs the real ``golem mcp login remote`` on a pseudo-terminal, opens the address it
shows as a browser whose person agrees at once would, and brings the answer back: to golem's
loopback callback, or (``LOGIN_BY=paste``) pasted at golem's prompt as on a machine whose
browser is elsewhere. Then ``golem mcp list`` must reach the server with the stored tokens,
the tokens file must be its owner's alone, and ``golem mcp logout remote`` must forget them.
Exit status 0 when all of that held."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx2
import pexpect

GOLEM = shutil.which("golem", path=os.path.dirname(sys.executable)) or "golem"


def main(url: str) -> int:
    with tempfile.TemporaryDirectory() as home:
        Path(home, "config.toml").write_text(f'[mcp_servers.remote]\nurl = "{url}"\n')
        env = {**os.environ, "GOLEM_HOME": home, "TERM": "dumb", "COLUMNS": "2000"}
        child = pexpect.spawn(GOLEM, ["mcp", "login", "remote"], env=env, encoding="utf-8", timeout=60,
                              dimensions=(24, 2000))  # fmt: skip
        child.expect(r"(https?://\S+)\s+Waiting for the browser")
        address = child.match.group(1)
        with httpx2.Client(follow_redirects=False, timeout=20) as browser:
            back = browser.get(address).headers["location"]
            if os.environ.get("LOGIN_BY") == "paste":
                child.sendline(back)
            else:
                browser.get(back)
        child.expect(r"Signed in to remote: \d+ tools?\.")
        child.expect(pexpect.EOF)
        tokens = Path(home, "state", "mcp-auth", "remote.json")
        mode = oct(tokens.stat().st_mode & 0o777)
        listed = subprocess.run([GOLEM, "mcp", "list"], env=env, capture_output=True, text=True, timeout=60)
        out = subprocess.run([GOLEM, "mcp", "logout", "remote"], env=env, capture_output=True, text=True, timeout=60)
        print(f"tokens {mode}; list: {listed.stdout.strip()!r}; logout: {out.stdout.strip()!r}")
        ok = mode == "0o600" and re.search(r"ready, \d+ tools?", listed.stdout) and not tokens.exists()
        return 0 if ok and "Signed out of remote" in out.stdout else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[-1]))
