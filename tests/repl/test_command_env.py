"""``run_command`` runs without the credentials golem holds (issue 25 item 4): the real
``golem ask`` with a key in every place golem reads one, a command that prints its whole
environment, and what reached the model, the history file and the screen."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.providerserver import ProviderServer
from tests.repl.conftest import GOLEM, golem_env
from tests.repl.test_tools import calls, stored

pytestmark = pytest.mark.slow

#: Each secret a variable holds is its own name, lower-cased, so a leak names its source.
HELD = {
    "OPENAI_API_KEY": "a built-in provider's key",
    "ANTHROPIC_API_KEY": "a built-in provider's key",
    "GROQ_API_KEY": "a preset's key",
    "MY_PROVIDER_SECRET": "a table's api_key_env",
    "HUB_TOKEN": "a tool server's bearer_token_env_var",
    "SERVER_SECRET": "a variable passed to a tool server (env_vars)",
    "SOMETHING_API_KEY": "any *_API_KEY",
    "AWS_SECRET_ACCESS_KEY": "named by [command_env] remove",
}
PASSED = {
    "KEEP_API_KEY": "exempted by [command_env] pass",
    "GITHUB_TOKEN": "another tool's token, not golem's",
    "PLAIN_SETTING": "an ordinary variable",
}


@pytest.fixture
def project(home: Path) -> Path:
    root = home / "project"
    root.mkdir()
    config = home / "config.toml"
    config.write_text(
        f'tool_root = "{root}"\n'
        + config.read_text()
        + '\n[providers.mine]\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = "MY_PROVIDER_SECRET"\n'
        '\n[mcp_servers.hub]\nurl = "http://127.0.0.1:9/mcp"\nbearer_token_env_var = "HUB_TOKEN"\n'
        '\n[mcp_servers.local]\ncommand = "true"\nenv_vars = ["SERVER_SECRET"]\n'
        '\n[command_env]\nremove = ["AWS_*"]\npass = ["KEEP_*"]\n'
    )
    return root


def test_a_command_printing_its_environment_shows_no_key(server: ProviderServer, home: Path, project: Path):
    server.enqueue(calls(("env", "run_command", {"command": "env; echo END"})))
    env = golem_env(home) | {name: f"secret-of-{name.lower()}" for name in HELD} | {
        name: f"value-of-{name.lower()}" for name in PASSED
    }
    done = subprocess.run([GOLEM, "ask", "-T", "shell", "--yes", "print the environment"], capture_output=True,
                          text=True, env=env, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (result,) = [m["content"] for m in server.requests[-1].json["messages"] if m["role"] == "tool"]
    assert result.rstrip().endswith("END") and "PATH=" in result
    everything = [result, done.stdout, done.stderr, *(m.content for m in stored(home))]
    for name, where in HELD.items():
        assert not any(f"secret-of-{name.lower()}" in text for text in everything), f"{name} ({where}) leaked"
    for name, why in PASSED.items():
        assert f"{name}=value-of-{name.lower()}" in result, f"{name} ({why}) did not pass"


def test_command_env_is_checked_with_the_file(home: Path, project: Path):
    config = home / "config.toml"
    config.write_text(config.read_text().replace('pass = ["KEEP_*"]', 'pass = "KEEP_*"'))
    done = subprocess.run([GOLEM, "ask", "-T", "shell", "go"], capture_output=True, text=True, env=golem_env(home),
                          timeout=60)  # fmt: skip
    assert done.returncode == 1
    assert f"{config}: command_env.pass must be a list of environment variable names or patterns" in done.stderr
