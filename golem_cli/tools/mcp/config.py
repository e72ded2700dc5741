"""One configured tool server, as the tools layer reads it: its name and its
``[mcp_servers.NAME]`` table (``config.schema.McpServerTable``, typed and checked with the file),
with what the tools layer asks of it.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping
from pathlib import Path

from msgspec import Struct

from golem_cli.config.schema import McpServerTable


class ServerConfig(Struct, frozen=True, kw_only=True):
    """A tool server: ``table.command`` for a stdio server, ``table.url`` for a streamable
    HTTP one."""

    name: str
    table: McpServerTable
    #: Where its OAuth tokens are kept (golem's state directory), None for no OAuth.
    tokens: Path | None = None

    @property
    def oauth(self) -> bool:
        """Whether golem speaks OAuth to it: an HTTP server, with nowhere else its credentials
        come from (``bearer_token_env_var``, an ``Authorization`` header)."""
        table = self.table
        static = table.bearer_token_env_var or any(k.lower() == "authorization" for k in table.headers)
        return table.url is not None and self.tokens is not None and not static

    @property
    def transport(self) -> str:
        return "stdio" if self.table.command is not None else "http"

    @property
    def where(self) -> str:
        """The command line or the URL, for people (never a header or an environment value)."""
        if self.table.command is not None:
            import shlex

            return shlex.join([self.table.command, *self.table.args])
        return _without_credentials(self.table.url or "")

    def offers(self, tool: str) -> bool:
        """Whether golem offers the server's tool ``tool`` (``enabled_tools``, ``disabled_tools``)."""
        table = self.table
        if table.enabled_tools is not None and tool not in table.enabled_tools:
            return False
        return tool not in table.disabled_tools

    def allows(self, tool: str) -> bool:
        """Whether ``allow`` names ``tool`` exactly."""
        return tool in self.table.allow

    def allows_by_pattern(self, tool: str) -> bool:
        """Whether a pattern of ``allow`` (``read_*``) matches ``tool``."""
        return any(fnmatch.fnmatchcase(tool, pattern) for pattern in self.table.allow)

    def environment(self, parent: Mapping[str, str] | None = None) -> dict[str, str]:
        """The variables a stdio server gets besides the SDK's safe defaults (``HOME``,
        ``PATH``, ``USER``...): those ``env_vars`` names from golem's environment, then ``env``."""
        parent = os.environ if parent is None else parent
        passed = {k: parent[k] for k in self.table.env_vars if k in parent}
        return passed | self.table.env

    def http_headers(self, parent: Mapping[str, str] | None = None) -> dict[str, str]:
        """``headers``, with ``Authorization: Bearer $VAR`` when ``bearer_token_env_var`` names a
        variable that is set."""
        parent = os.environ if parent is None else parent
        headers = dict(self.table.headers)
        variable = self.table.bearer_token_env_var
        token = parent.get(variable, "") if variable else ""
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return headers


def server_configs(tables: Mapping[str, McpServerTable], tokens: Path | None = None) -> dict[str, ServerConfig]:
    """Every configured server by name, disabled ones included (``table.enabled`` says which)."""
    return {name: ServerConfig(name=name, table=table, tokens=tokens) for name, table in tables.items()}


def _without_credentials(url: str) -> str:
    """``url`` without a user or password and without its query (which may carry a key)."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return url.split("?", 1)[0]
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
