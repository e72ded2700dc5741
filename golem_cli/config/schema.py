"""What ``config.toml`` may hold, declared once: each key, its type, its bounds, its default, and
what it must be in words (the ``description``, which errors quote: ``KEY must be WHAT, not
VALUE``). golem reads the file as these typed values; ``tables.py`` turns the TOML into them.

This module is the config layer's vocabulary, shared downward: the provider layer reads
``ProviderTable`` and ``ModelTable``, the tools layer ``McpServerTable``. So it imports nothing
of golem and nothing but msgspec (already loaded by the core).

A new key is one line in the table it belongs to, e.g. (issues to come): ``compact_model``,
``auto_compact``, ``summarize_trimmed`` in ``ConfigFile``. A key a table does not declare is
refused, ignored with a warning, or kept as a model option, as the table's ``OTHERS`` says.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from msgspec import Meta, Struct, field

# The values the tables take, with their bounds and what they must be, in the words an error
# quotes. Meta's own checks (bounds, a pattern searched for) are msgspec's.
Seconds = Annotated[float, Meta(gt=0, description="a number of seconds above 0")]
Whole = Annotated[int, Meta(ge=1, description="a whole number of at least 1")]
Switch = Annotated[bool, Meta(description="true or false")]
Directory = Annotated[str, Meta(pattern=r"\S", description="a directory path")]
Names = Annotated[tuple[str, ...], Meta(description="a list of the server's tool names")]


class Table(Struct, frozen=True, kw_only=True):
    """A TOML table golem declares. ``OTHERS`` is what happens to a key it does not declare:
    ``"refuse"`` (an error naming the known keys), ``"warn"`` (ignored, and said once), or the
    name of the field that keeps them as they are (checked later by whoever reads them)."""

    OTHERS: ClassVar[str] = "refuse"
    #: What the table is, for "KEY is not a key of NOUN".
    NOUN: ClassVar[str] = "this table"

    @classmethod
    def problem(cls, table: dict[str, Any]) -> str:
        """What is wrong with the table as a whole once each key passed ("" when nothing):
        rules about which keys go together."""
        return ""


Kind = Annotated[
    Literal["openai", "anthropic", "azure"],
    Meta(description='"openai" (any OpenAI-compatible server), "anthropic" or "azure"'),
]
Url = Annotated[str, Meta(description='a URL like "https://host/v1"')]
Key = Annotated[str, Meta(description="a string")]
KeyVariable = Annotated[str, Meta(description='the name of an environment variable, like "OPENAI_API_KEY"')]
ApiVersion = Annotated[str, Meta(description='an Azure API version like "2024-10-21"')]
Retries = Annotated[int, Meta(ge=0, description="a whole number, 0 or more")]
Bytes = Annotated[int, Meta(ge=1, description="a whole number of bytes, at least 1")]
CacheTtl = Annotated[Literal["5m", "1h"], Meta(description='"5m" or "1h"')]


class ProviderTable(Table, frozen=True, kw_only=True):
    """A ``[providers.NAME]`` table: where a provider is and how golem talks to it. Every other
    key is a model option for all its models (``temperature = 0.7``), kept in ``options`` and
    checked, typos included, by the provider layer when the provider is used. An absent value
    takes the provider layer's default."""

    OTHERS: ClassVar[str] = "options"

    type: Kind | None = None
    base_url: Url | None = None
    api_key: Key | None = None
    api_key_env: KeyVariable | None = None
    api_version: ApiVersion | None = None
    timeout: Seconds | None = None
    connect_timeout: Seconds | None = None
    max_retries: Retries | None = None
    max_reply_bytes: Bytes | None = None
    max_idle: Seconds | None = None
    #: Prompt caching (docs/adr/0024): Anthropic cache breakpoints, the cache key elsewhere.
    cache: Switch | None = None
    cache_ttl: CacheTtl | None = None
    #: Send ``prompt_cache_key`` to an OpenAI-compatible endpoint other than OpenAI and Azure.
    prompt_cache_key: Switch | None = None
    options: dict[str, Any] = field(default_factory=dict)


Usd = Annotated[float, Meta(ge=0, description="a price in USD per million tokens, 0 or more")]
Tokens = Annotated[int, Meta(ge=1, description="a whole number of tokens, at least 1")]
Budget = Annotated[float, Meta(gt=0, description="an amount in USD above 0")]


class PriceTable(Table, frozen=True, kw_only=True):
    """``price = {input = ..., output = ...}`` in a model's table: USD per million tokens. A
    cache price left out is the built-in one when golem knows the model, else the input price."""

    NOUN: ClassVar[str] = "a price"

    input: Usd
    output: Usd
    cache_read: Usd | None = None
    cache_write: Usd | None = None
    cache_write_1h: Usd | None = None


class ModelTable(Table, frozen=True, kw_only=True):
    """A ``[models."provider:model"]`` table: what golem knows of that one model (its price,
    its context window: they win over the built-in figures), its prompt caching, and model
    options for it (they win over its provider's), checked by the provider layer."""

    OTHERS: ClassVar[str] = "options"

    cache: Switch | None = None
    cache_ttl: CacheTtl | None = None
    price: PriceTable | None = None
    context_window: Tokens | None = None
    options: dict[str, Any] = field(default_factory=dict)


#: A tool server's name: letters and digits, single ``-`` or ``_`` between them. It begins the
#: names of the server's tools as the model sees them (``NAME__TOOL``, see
#: tools/mcp/naming.py), so it never holds ``__`` nor ends in ``_``, and ``-T NAME.TOOL``
#: needs it free of dots.
SERVER_NAME = r"^[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*\Z"
SERVER_NAME_MAX = 32
ServerName = Annotated[str, Meta(pattern=SERVER_NAME, max_length=SERVER_NAME_MAX, description=(
    f"a name golem can use: letters and digits, with single - or _ between them, at most {SERVER_NAME_MAX} "
    "characters (it begins its tools' names)"))]  # fmt: skip
#: Names that already select something else: the built-in tool groups and tools, ``all``
#: (tests/tools/test_mcp_config.py keeps this in step with tools/builtin.py).
RESERVED_SERVER_NAMES = frozenset({
    "all", "builtin", "fs", "shell", "web", "read_file", "list_files", "search_files", "write_file", "edit_file",
    "run_command", "fetch_url",
})  # fmt: skip
_STDIO_KEYS = ("command", "args", "env", "env_vars", "cwd")
_HTTP_KEYS = ("url", "headers", "bearer_token_env_var", "oauth_client_id", "oauth_client_secret_env", "oauth_scopes")

Program = Annotated[str, Meta(pattern=r"\S", description='a program to run, like "npx"')]
Arguments = Annotated[tuple[str, ...], Meta(description='a list of strings, like ["-y", "server"]')]
Environment = Annotated[dict[str, str], Meta(description='a table of strings, like { TOKEN = "..." }')]
Passed = Annotated[
    tuple[str, ...], Meta(description='a list of environment variable names to pass on, like ["GITHUB_TOKEN"]')
]
ServerUrl = Annotated[
    str, Meta(pattern=r"^https?://\S+\Z", description='an http(s) URL like "http://127.0.0.1:8000/mcp"')
]
Headers = Annotated[dict[str, str], Meta(description='a table of strings, like { Authorization = "Bearer ..." }')]
TokenVariable = Annotated[
    str, Meta(pattern=r"^[A-Za-z_][A-Za-z0-9_]*\Z", description='the name of an environment variable, like "MCP_TOKEN"')
]
ClientId = Annotated[str, Meta(pattern=r"\S", description="an OAuth client ID the server's authorization server gave")]
Scopes = Annotated[tuple[str, ...], Meta(description='a list of OAuth scopes, like ["repo", "read:org"]')]
Offered = Annotated[tuple[str, ...], Meta(description='a list of the server\'s tool names, like ["search"]')]
Allowed = Annotated[tuple[str, ...], Meta(description='a list of tool names or patterns, like ["read_*"]')]


class McpServerTable(Table, frozen=True, kw_only=True):
    """An ``[mcp_servers.NAME]`` table: a tool server golem starts (``command``) or reaches
    (``url``), in the shape Codex CLI reads, plus which of its tools run without asking."""

    NOUN: ClassVar[str] = "a tool server"

    command: Program | None = None
    args: Arguments = ()
    env: Environment = field(default_factory=dict)
    env_vars: Passed = ()
    cwd: Directory | None = None
    url: ServerUrl | None = None
    headers: Headers = field(default_factory=dict)
    bearer_token_env_var: TokenVariable | None = None
    enabled: Switch = True
    startup_timeout_sec: Seconds = 20.0
    tool_timeout_sec: Seconds = 120.0
    enabled_tools: Offered | None = None
    disabled_tools: Names = ()
    allow: Allowed = ()
    allow_read_only: Switch = False
    instructions: Switch = True
    oauth_client_id: ClientId | None = None
    oauth_client_secret_env: TokenVariable | None = None
    oauth_scopes: Scopes = ()

    @classmethod
    def problem(cls, table: dict[str, Any]) -> str:
        if "command" in table and "url" in table:
            return "has both command and url; a tool server is one or the other"
        if "command" not in table and "url" not in table:
            return "needs either command (a program golem starts) or url (a streamable HTTP server)"
        kind, others = ("a command", _HTTP_KEYS) if "command" in table else ("a url", _STDIO_KEYS)
        wrong = [key for key in others if key in table]
        return f"{wrong[0]} does not go with {kind}" if wrong else ""


Globs = Annotated[
    tuple[str, ...],
    Meta(description='a list of environment variable names or patterns, like ["AWS_*", "NPM_TOKEN"]'),
]


class CommandEnvTable(Table, frozen=True, kw_only=True):
    """``[command_env]``: the environment ``run_command`` hands a command. golem removes the
    credentials it holds (every provider's key variable, the tool servers' tokens, any
    ``*_API_KEY``); ``remove`` names more, ``pass`` exempts names from all of it. A key that
    is a Python keyword is declared under another name and read under its own (``name=``)."""

    NOUN: ClassVar[str] = "[command_env]"

    remove: Globs = ()
    passed: Globs = field(default=(), name="pass")


ModelName = Annotated[str, Meta(pattern=r"\S", description='a "provider:model" name like "openai:gpt-4o-mini"')]
Providers = Annotated[dict[str, ProviderTable], Meta(description="a table of [providers.NAME] tables")]
Models = Annotated[
    dict[str, ModelTable], Meta(description='a table of [models."provider:model"] tables of model options')
]
AliasTarget = Annotated[
    str, Meta(pattern=r"^[^:\s]+:\S", description='a "provider:model" name like "groq:llama-3.3-70b"')
]
Aliases = Annotated[dict[str, AliasTarget], Meta(description='a table of NAME = "provider:model"')]
Tools = Annotated[tuple[str, ...], Meta(description='a list of tool or group names like ["fs", "web"]')]
Allow = Annotated[
    tuple[str, ...], Meta(description='a list of tools, groups or rules like ["read_file", "run_command(git status*)"]')
]
Deny = Annotated[tuple[str, ...], Meta(description='a list of tools or rules like ["run_command(git push*)"]')]
Characters = Annotated[int, Meta(ge=1000, description="a whole number of characters, at least 1000")]
Servers = Annotated[dict[ServerName, McpServerTable], Meta(description="a table of [mcp_servers.NAME] tables")]
Fraction = Annotated[float, Meta(gt=0, le=1, description="a fraction of the context window above 0 and at most 1")]
AutoCompact = Annotated[
    bool | Fraction, Meta(description="a fraction of the context window like 0.8, true (0.8) or false (off)")
]


class ConfigFile(Table, frozen=True, kw_only=True):
    """The whole file. A top-level key it does not declare is ignored with a warning (a typo
    should not stop a chat; the warning names the known key it looks like)."""

    OTHERS: ClassVar[str] = "warn"

    model: ModelName | None = None
    max_messages: Whole = 20
    trim_stride: Whole = 1
    context_tokens: Whole | None = None
    max_cost: Budget | None = None
    providers: Providers = field(default_factory=dict)
    models: Models = field(default_factory=dict)
    aliases: Aliases = field(default_factory=dict)  # short names for models, wherever a model is named
    tools: Tools = ()
    allow: Allow = ()
    deny: Deny = ()
    tool_root: Directory | None = None
    tool_output_limit: Characters = 30_000
    command_timeout: Seconds = 120.0
    command_env: CommandEnvTable = field(default_factory=CommandEnvTable)
    project_instructions: Switch = True
    mcp_servers: Servers = field(default_factory=dict)
    #: Compaction (docs/adr/0032): the model that writes summaries, rolling summaries, auto-compact.
    compact_model: ModelName | None = None
    summarize_trimmed: Switch = False
    auto_compact: AutoCompact = False

    @classmethod
    def problem(cls, table: dict[str, Any]) -> str:
        for name in table.get("aliases", {}):
            if ":" in name or not name.strip():
                return f"aliases.{name}: an alias is a name without ':' (it stands for a provider:model name)"
        for name in table.get("mcp_servers", {}):
            if name in RESERVED_SERVER_NAMES:
                return f"mcp_servers.{name}: {name!r} is a name golem uses for its own tools; pick another"
        return ""


#: The file's top-level keys (what "did you mean" picks from).
KNOWN_KEYS = frozenset(ConfigFile.__struct_fields__)
