"""One configured tool server, as the tools layer reads it.

``config.toml``'s ``[mcp_servers.NAME]`` tables are checked by the config layer's schema
(names, types, one transport) and reach this layer as plain dicts, as provider tables reach
the provider layer; ``ServerConfig.from_table`` turns one into a typed value.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: How long a server may take to start and list its tools (``startup_timeout_sec``).
DEFAULT_STARTUP_TIMEOUT = 20.0
#: How long one call may take before golem cancels it (``tool_timeout_sec``).
DEFAULT_TOOL_TIMEOUT = 120.0


@dataclass(frozen=True, kw_only=True)
class ServerConfig:
    """An ``[mcp_servers.NAME]`` table. ``command`` for a stdio server, ``url`` for a
    streamable HTTP one."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    env_vars: tuple[str, ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    bearer_token_env_var: str | None = None
    enabled: bool = True
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    tool_timeout: float = DEFAULT_TOOL_TIMEOUT
    enabled_tools: tuple[str, ...] | None = None
    disabled_tools: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    allow_read_only: bool = False

    @classmethod
    def from_table(cls, name: str, table: Mapping[str, Any]) -> ServerConfig:
        enabled_tools = table.get("enabled_tools")
        return cls(
            name=name,
            command=table.get("command"),
            args=tuple(table.get("args", ())),
            env=dict(table.get("env", {})),
            env_vars=tuple(table.get("env_vars", ())),
            cwd=table.get("cwd"),
            url=table.get("url"),
            headers=dict(table.get("headers", {})),
            bearer_token_env_var=table.get("bearer_token_env_var"),
            enabled=bool(table.get("enabled", True)),
            startup_timeout=float(table.get("startup_timeout_sec") or DEFAULT_STARTUP_TIMEOUT),
            tool_timeout=float(table.get("tool_timeout_sec") or DEFAULT_TOOL_TIMEOUT),
            enabled_tools=None if enabled_tools is None else tuple(enabled_tools),
            disabled_tools=tuple(table.get("disabled_tools", ())),
            allow=tuple(table.get("allow", ())),
            allow_read_only=bool(table.get("allow_read_only", False)),
        )

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"

    @property
    def where(self) -> str:
        """The command line or the URL, for people (never a header or an environment value)."""
        if self.command is not None:
            import shlex

            return shlex.join([self.command, *self.args])
        return _without_credentials(self.url or "")

    def offers(self, tool: str) -> bool:
        """Whether golem offers the server's tool ``tool`` (``enabled_tools``, ``disabled_tools``)."""
        if self.enabled_tools is not None and tool not in self.enabled_tools:
            return False
        return tool not in self.disabled_tools

    def allows(self, tool: str) -> bool:
        """Whether ``allow`` names ``tool`` exactly."""
        return tool in self.allow

    def allows_by_pattern(self, tool: str) -> bool:
        """Whether a pattern of ``allow`` (``read_*``) matches ``tool``."""
        return any(fnmatch.fnmatchcase(tool, pattern) for pattern in self.allow)

    def environment(self, parent: Mapping[str, str] | None = None) -> dict[str, str]:
        """The variables a stdio server gets besides the SDK's safe defaults (``HOME``,
        ``PATH``, ``USER``...): those ``env_vars`` names from golem's environment, then ``env``."""
        parent = os.environ if parent is None else parent
        passed = {k: parent[k] for k in self.env_vars if k in parent}
        return passed | self.env

    def http_headers(self, parent: Mapping[str, str] | None = None) -> dict[str, str]:
        """``headers``, with ``Authorization: Bearer $VAR`` when ``bearer_token_env_var`` names a
        variable that is set."""
        parent = os.environ if parent is None else parent
        headers = dict(self.headers)
        token = parent.get(self.bearer_token_env_var or "", "") if self.bearer_token_env_var else ""
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return headers


def server_configs(tables: Mapping[str, Mapping[str, Any]]) -> dict[str, ServerConfig]:
    """Every configured server by name, disabled ones included (``enabled`` says which)."""
    return {name: ServerConfig.from_table(name, table) for name, table in tables.items()}


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
