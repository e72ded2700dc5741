"""What ``config.toml`` may hold, as one pydantic model, and its errors in words that name the
key and the file.

pydantic is imported only here, and this module only when the file changed since it last
passed (see ``settings.check``): importing pydantic and building the model costs more than
``golem chat`` may take to show its prompt. The model only checks; ``settings`` builds
``Settings`` from the TOML table itself, so a cached verdict and a fresh one give the same
result. Add a field here when golem learns a new key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, model_validator

_WHOLE = "a whole number of at least 1"
_SECONDS = "a number of seconds above 0"


class ProviderTable(BaseModel):
    """A ``[providers.NAME]`` table. Keys not listed are left to the provider layer."""

    model_config = ConfigDict(extra="allow", strict=True)

    type: Literal["openai", "anthropic", "azure"] | None = Field(
        None, description='"openai" (any OpenAI-compatible server), "anthropic" or "azure"'
    )
    base_url: str | None = Field(None, description='a URL like "https://host/v1"')
    api_key: str | None = Field(None, description="a string")
    api_key_env: str | None = Field(None, description='the name of an environment variable, like "OPENAI_API_KEY"')
    timeout: float | None = Field(None, gt=0, description=_SECONDS)
    connect_timeout: float | None = Field(None, gt=0, description=_SECONDS)
    max_retries: int | None = Field(None, ge=0, description="a whole number, 0 or more")
    max_tokens: int | None = Field(None, ge=1, description=_WHOLE)


#: A tool server's name: letters and digits, single ``-`` or ``_`` between them. It begins the
#: names of the server's tools as the model sees them (``NAME__TOOL``, see
#: tools/mcp/naming.py), so it never holds ``__`` nor ends in ``_``, and ``-T NAME.TOOL``
#: needs it free of dots.
SERVER_NAME = r"^[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*$"
SERVER_NAME_MAX = 32
#: Names that already select something else: the built-in tool groups and tools, ``all``
#: (tests/tools/test_mcp_config.py keeps this in step with tools/builtin.py).
RESERVED_SERVER_NAMES = frozenset({
    "all", "builtin", "fs", "shell", "web", "read_file", "list_files", "search_files", "write_file", "edit_file",
    "run_command", "fetch_url",
})  # fmt: skip
_STDIO_KEYS = ("command", "args", "env", "env_vars", "cwd")
_HTTP_KEYS = ("url", "headers", "bearer_token_env_var")


class McpServerTable(BaseModel):
    """An ``[mcp_servers.NAME]`` table: a tool server golem starts (``command``) or reaches
    (``url``), in the shape Codex CLI reads, plus which of its tools run without asking."""

    model_config = ConfigDict(extra="forbid", strict=True)

    command: str | None = Field(None, pattern=r"\S", description='a program to run, like "npx"')
    args: list[str] = Field(default_factory=list, description='a list of strings, like ["-y", "server"]')
    env: dict[str, str] = Field(default_factory=dict, description='a table of strings, like { TOKEN = "..." }')
    env_vars: list[str] = Field(
        default_factory=list, description='a list of environment variable names to pass on, like ["GITHUB_TOKEN"]'
    )
    cwd: str | None = Field(None, pattern=r"\S", description="a directory path")
    url: str | None = Field(
        None, pattern=r"^https?://\S+$", description='an http(s) URL like "http://127.0.0.1:8000/mcp"'
    )
    headers: dict[str, str] = Field(
        default_factory=dict, description='a table of strings, like { Authorization = "Bearer ..." }'
    )
    bearer_token_env_var: str | None = Field(
        None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description='the name of an environment variable, like "MCP_TOKEN"'
    )
    enabled: bool = Field(True, description="true or false")
    startup_timeout_sec: float | None = Field(None, gt=0, description=_SECONDS)
    tool_timeout_sec: float | None = Field(None, gt=0, description=_SECONDS)
    enabled_tools: list[str] | None = Field(None, description='a list of the server\'s tool names, like ["search"]')
    disabled_tools: list[str] = Field(default_factory=list, description="a list of the server's tool names")
    allow: list[str] = Field(default_factory=list, description='a list of tool names or patterns, like ["read_*"]')
    allow_read_only: bool = Field(False, description="true or false")

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerTable:
        if self.command is not None and self.url is not None:
            raise ValueError("has both command and url; a tool server is one or the other")
        if self.command is None and self.url is None:
            raise ValueError("needs either command (a program golem starts) or url (a streamable HTTP server)")
        given = self.model_fields_set
        wrong = [k for k in (_HTTP_KEYS if self.command is not None else _STDIO_KEYS) if k in given]
        if wrong:
            kind = "a command" if self.command is not None else "a url"
            raise ValueError(f"{wrong[0]} does not go with {kind}")
        return self


ServerName = Annotated[str, StringConstraints(pattern=SERVER_NAME, max_length=SERVER_NAME_MAX)]


class ConfigFile(BaseModel):
    """The whole file. Unknown top-level keys are allowed here and reported as a warning."""

    model_config = ConfigDict(extra="allow", strict=True)

    model: str | None = Field(None, pattern=r"\S", description='a "provider:model" name like "openai:gpt-4o-mini"')
    max_messages: int = Field(20, ge=1, description=_WHOLE)
    context_tokens: int | None = Field(None, ge=1, description=_WHOLE)
    providers: dict[str, ProviderTable] = Field(default_factory=dict, description="a table of [providers.NAME] tables")
    models: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description='a table of [models."provider:model"] tables of model options'
    )
    tools: list[str] = Field(default_factory=list, description='a list of tool or group names like ["fs", "web"]')
    allow: list[str] = Field(default_factory=list, description='a list of tool or group names like ["read_file"]')
    tool_root: str | None = Field(None, pattern=r"\S", description="a directory path")
    tool_output_limit: int = Field(30_000, ge=1000, description="a whole number of characters, at least 1000")
    command_timeout: float = Field(120.0, gt=0, description=_SECONDS)
    mcp_servers: dict[ServerName, McpServerTable] = Field(
        default_factory=dict, description="a table of [mcp_servers.NAME] tables"
    )

    @model_validator(mode="after")
    def _no_reserved_server_names(self) -> ConfigFile:
        for name in self.mcp_servers:
            if name in RESERVED_SERVER_NAMES:
                raise ValueError(f"mcp_servers.{name}: {name!r} is a name golem uses for its own tools; pick another")
        return self


def problem(table: dict[str, Any], source: Path) -> str:
    """What is wrong with the file, naming it, the key, what the value must be and what it
    is; "" when nothing is."""
    try:
        ConfigFile.model_validate(table)
    except ValidationError as e:
        errors = e.errors()
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return f"{source}: {describe(errors[0])}{more}"
    return ""


def describe(error: Any) -> str:
    """One pydantic error as ``key must be WHAT, not VALUE`` (or what is wrong with a table)."""
    loc = tuple(str(part) for part in error["loc"])
    if error["type"] == "value_error":
        message = str(error.get("ctx", {}).get("error", error["msg"]))
        return f"{'.'.join(loc)}: {message}" if loc else message
    if error["type"] == "extra_forbidden" and loc[:1] == ("mcp_servers",):
        known = ", ".join(McpServerTable.model_fields)
        return f"{'.'.join(loc)} is not a key of a tool server (known: {known})"
    if loc[:1] == ("mcp_servers",) and loc[-1] == "[key]":
        return (
            f"mcp_servers.{_toml(error['input'])} is not a name golem can use: letters and digits, with single "
            f"- or _ between them, at most {SERVER_NAME_MAX} characters (it begins its tools' names)"
        )
    return f"{'.'.join(loc)} must be {_expected(loc)}, not {_toml(error['input'])}"


def _expected(loc: tuple[str, ...]) -> str:
    if loc and loc[0] in ("tools", "allow"):
        return str(ConfigFile.model_fields[loc[0]].description)
    if len(loc) == 1 and loc[0] in ConfigFile.model_fields:
        return str(ConfigFile.model_fields[loc[0]].description)
    if len(loc) == 2 and loc[0] in ("providers", "models", "mcp_servers"):
        return "a table"
    if len(loc) >= 3 and loc[0] == "mcp_servers" and loc[2] in McpServerTable.model_fields:
        return str(McpServerTable.model_fields[loc[2]].description)
    if len(loc) == 3 and loc[2] in ProviderTable.model_fields:
        return str(ProviderTable.model_fields[loc[2]].description)
    return "something else"


def _toml(value: Any) -> str:
    """A value as TOML spells it, so the user recognises what they wrote."""
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return str(value)
