"""The environment ``run_command`` hands a command: golem's own, without the credentials golem holds.

A command the model runs need not name a variable to leak it: a test suite or a build script
that prints its environment puts every key into the tool result, and from there into the
provider request, the history file and the search index. So golem removes what it holds for
its providers and tool servers (the names the caller gives: every provider's key variable,
the tool servers' tokens), any ``*_API_KEY``, and the names ``[command_env] remove`` adds;
``[command_env] pass`` exempts names from all of it. Other tokens (a ``GITHUB_TOKEN`` that
``gh`` needs) pass unless removed. Tool servers get a minimal environment of their own
(``tools/mcp/transport.py``); this is for commands only.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping

from msgspec import Struct

from golem_cli.config.schema import McpServerTable

#: Removed whatever the configuration says (unless ``pass`` names them): the way every
#: provider golem knows spells its key variable, and most others do.
ALWAYS_REMOVED = ("*_API_KEY",)


class CommandEnv(Struct, frozen=True, kw_only=True):
    """Which of golem's variables a command does not get. ``credentials`` are exact names
    (what golem is configured to read keys and tokens from); ``remove`` and ``passed`` are
    ``[command_env]``'s patterns (``fnmatch``, case-sensitive as POSIX names are)."""

    credentials: frozenset[str] = frozenset()
    remove: tuple[str, ...] = ()
    passed: tuple[str, ...] = ()

    def removes(self, name: str) -> bool:
        """Whether a command runs without ``name``."""
        if _matches(name, self.passed):
            return False
        return name in self.credentials or _matches(name, (*ALWAYS_REMOVED, *self.remove))

    def environment(self, parent: Mapping[str, str] | None = None) -> dict[str, str]:
        """``parent`` (golem's environment) without what a command must not get."""
        parent = os.environ if parent is None else parent
        return {name: value for name, value in parent.items() if not self.removes(name)}


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def server_credentials(servers: Mapping[str, McpServerTable]) -> frozenset[str]:
    """The variables golem reads for its tool servers: each ``bearer_token_env_var``, and the
    ``env_vars`` it passes on to a server (a server's own token, not the commands')."""
    names: set[str] = set()
    for table in servers.values():
        names.update(table.env_vars)
        if table.bearer_token_env_var:
            names.add(table.bearer_token_env_var)
    return frozenset(names)
