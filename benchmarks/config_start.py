"""What reading config.toml costs a command's start, and whether a cached verdict would pay.

Times, interleaved, in one fresh GOLEM_HOME holding a typical config.toml (a model, three
provider tables with options, a model table, two tool servers):

- ``load_settings()`` alone in a fresh interpreter, against ``python -c pass`` and against
  ``import tomllib, msgspec`` (the floor of any typed reading of the file);
- ``golem models`` (reads the file, prints) to its end;
- ``golem chat`` until its prompt is drawn, on a pseudo-terminal;
- ``golem list --limit 20`` to its end (it does not read the file: a yardstick of the rest).

With ``--before TREE`` (a checkout of an earlier golem, e.g. ``git archive 52accc1``) each row
also runs that tree's code, with its digest cache warm (the stamp left by the previous run) and
cold (the stamp removed before each run, so pydantic checks the file), as ADR 0008 had it.

    python benchmarks/config_start.py [--runs 11] [--before /tmp/golem-52accc1]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pexpect

GOLEM = shutil.which("golem", path=os.path.dirname(sys.executable)) or "golem"

CONFIG = """model = "offline:echo"
max_messages = 30
tools = ["fs"]
allow = ["read_file", "list_files"]

[providers.openai]
timeout = 120
max_retries = 2
temperature = 0.4

[providers.anthropic]
api_key_env = "ANTHROPIC_API_KEY"
max_tokens = 16000
thinking_budget = 4000

[providers.local]
type = "openai"
base_url = "http://127.0.0.1:8080/v1"
timeout = 600

[models."openai:o3-mini"]
reasoning_effort = "high"

[mcp_servers.github]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
env_vars = ["GITHUB_TOKEN"]
allow = ["get_*", "search_*"]

[mcp_servers.remote]
url = "http://127.0.0.1:8000/mcp"
bearer_token_env_var = "MCP_TOKEN"
enabled = false
"""

LOAD = "from golem_cli.config.settings import load_settings; load_settings()"


def timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def to_prompt(env: dict[str, str]) -> float:
    start = time.perf_counter()
    child = pexpect.spawn(GOLEM, ["chat"], env=env, encoding="utf-8", dimensions=(40, 120), timeout=60)
    child.expect("you>")
    elapsed = time.perf_counter() - start
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    return elapsed


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:6.0f} ms  (min {min(values) * 1000:.0f}, max {max(values) * 1000:.0f})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--before", help="a tree of an earlier golem, run with PYTHONPATH")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="golem-config-"))
    (home / "config.toml").write_text(CONFIG)
    os.chdir(home)  # so that ``python -c`` imports golem from the tree asked for, not from the cwd
    base = {
        k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith(("GOLEM_", "PYTHON"))
    }
    base.update(GOLEM_HOME=str(home), PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm")
    trees = {"after": base}
    if args.before:
        trees["before, cache warm"] = trees["before, cache cold"] = base | {"PYTHONPATH": args.before}
    stamp = home / "cache" / "config-checked"
    rows: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        rows.setdefault(name, []).append(value)

    for _ in range(args.runs):  # interleaved: noise hits every row alike
        add("python -c pass", timed([sys.executable, "-c", "pass"], base))
        add("python -c 'import tomllib, msgspec'", timed([sys.executable, "-c", "import tomllib, msgspec"], base))
        for tree, env in trees.items():
            for name, run in (
                ("load_settings()", lambda env=env: timed([sys.executable, "-c", LOAD], env)),
                ("golem models", lambda env=env: timed([GOLEM, "models"], env)),
                ("golem chat -> you>", lambda env=env: to_prompt(env)),
                ("golem list --limit 20", lambda env=env: timed([GOLEM, "list", "--limit", "20"], env)),
            ):
                if tree.endswith("cold"):
                    stamp.unlink(missing_ok=True)
                elif tree.endswith("warm"):
                    timed([sys.executable, "-c", LOAD], env)  # leaves the stamp
                add(f"{name:<24}{tree}", run())
    shutil.rmtree(home, ignore_errors=True)
    for name, values in rows.items():
        print(f"{name:<48}{ms(values)}")


if __name__ == "__main__":
    main()
