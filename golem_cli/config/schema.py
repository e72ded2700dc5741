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
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

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
    """One pydantic error as ``key must be WHAT, not VALUE``."""
    loc = tuple(str(part) for part in error["loc"])
    return f"{'.'.join(loc)} must be {_expected(loc)}, not {_toml(error['input'])}"


def _expected(loc: tuple[str, ...]) -> str:
    if loc and loc[0] in ("tools", "allow"):
        return str(ConfigFile.model_fields[loc[0]].description)
    if len(loc) == 1 and loc[0] in ConfigFile.model_fields:
        return str(ConfigFile.model_fields[loc[0]].description)
    if len(loc) == 2 and loc[0] in ("providers", "models"):
        return "a table"
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
