"""What a tool server may ask of the chat, or tell it, while it runs: a question for the user
(elicitation), a call's progress, a log line. The CLI sets these (it alone reads keys and
prints); without them a question is declined at once and progress and logs go unseen.

Everything here is SDK-free: the connection turns the SDK's types into these.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from msgspec import Struct, field

Action = Literal["accept", "decline", "cancel"]


class Field(Struct, frozen=True, kw_only=True):
    """One field of a server's form: its key, its JSON type, and what the form says of it."""

    key: str
    kind: str  # "string", "number", "integer", "boolean"
    title: str = ""
    description: str = ""
    required: bool = False
    default: Any = None
    choices: tuple[str, ...] = ()  # an enum's values
    labels: tuple[str, ...] = ()  # what the form calls them (enumNames, oneOf titles)
    many: bool = False  # an array of choices


class Elicitation(Struct, frozen=True, kw_only=True):
    """A server's request for input: a form (``fields``) or, in URL mode, a URL to open."""

    server: str
    message: str
    fields: tuple[Field, ...] = ()
    url: str = ""


class Reply(Struct, frozen=True, kw_only=True):
    """The user's answer: ``accept`` with the form's values, ``decline`` or ``cancel``."""

    action: Action
    content: dict[str, Any] = field(default_factory=dict)
    why: str = ""  # a line saying why golem answered by itself (no terminal)


Elicit = Callable[[Elicitation], Awaitable[Reply]]
#: ``(call ID, progress, total, message)``
Progress = Callable[[str, float, float | None, str | None], None]
#: ``(server, level, text)``
Log = Callable[[str, str, str], None]

NO_TERMINAL = "nobody can be asked here (no terminal), so golem declined it"


class ServerHooks(Struct, kw_only=True):
    """Shared by a chat's tool servers; the CLI fills it in when it can ask and show."""

    elicit: Elicit | None = None
    progress: Progress | None = None
    log: Log | None = None
    #: Log levels shown below ``warning`` too (``--debug``).
    debug: bool = False

    async def ask(self, request: Elicitation, notify: Callable[[str], None]) -> Reply:
        if self.elicit is None:
            notify(f"tool server {request.server!r} asked for input; {NO_TERMINAL}")
            return Reply(action="decline", why=NO_TERMINAL)
        return await self.elicit(request)


#: Levels of ``notifications/message``, least severe first.
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def shown(level: str, debug: bool) -> bool:
    """Whether a log line at ``level`` is shown: warning and above, everything with ``--debug``."""
    rank = LEVELS.index(level) if level in LEVELS else len(LEVELS)
    return debug or rank >= LEVELS.index("warning")


def form_fields(schema: object) -> tuple[Field, ...]:
    """The fields of an elicitation's ``requestedSchema`` (a flat object of primitives)."""
    if not isinstance(schema, dict):
        return ()
    properties = schema.get("properties")
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    found: list[Field] = []
    for key, spec in properties.items() if isinstance(properties, dict) else ():
        if isinstance(key, str) and isinstance(spec, dict):
            found.append(_field(key, spec, key in needed))
    return tuple(found)


def _field(key: str, spec: dict[str, Any], required: bool) -> Field:
    kind = spec.get("type") if isinstance(spec.get("type"), str) else "string"
    many = kind == "array"
    items = spec.get("items")
    source: dict[str, Any] = items if many and isinstance(items, dict) else spec
    choices, labels = _choices(source)
    return Field(
        key=key, kind=str(kind), title=_text(spec.get("title")), description=_text(spec.get("description")),
        required=required, default=spec.get("default"), choices=choices, labels=labels, many=many,
    )  # fmt: skip


def _choices(spec: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """An enum's values and their titles (``enum`` with ``enumNames``, or ``oneOf``/``anyOf``
    of ``const`` with ``title``)."""
    if isinstance(spec.get("enum"), list):
        values = tuple(str(v) for v in spec["enum"])
        names = spec.get("enumNames")
        labels = tuple(str(n) for n in names) if isinstance(names, list) and len(names) == len(values) else ()
        return values, labels
    options = spec.get("oneOf") or spec.get("anyOf")
    if isinstance(options, list):
        pairs = [(str(o.get("const")), _text(o.get("title"))) for o in options if isinstance(o, dict) and "const" in o]
        return tuple(v for v, _ in pairs), tuple(t or v for v, t in pairs)
    return (), ()


def convert(field: Field, typed: str) -> tuple[Any, str]:
    """The value ``typed`` for ``field`` (its type), or a problem saying what it must be."""
    text = typed.strip()
    if field.many:
        values = [v.strip() for v in text.split(",") if v.strip()]
        wrong = [v for v in values if field.choices and v not in field.choices]
        return (values, "") if not wrong else (None, f"choose from {', '.join(field.choices)}")
    if field.choices and text not in field.choices:
        return None, f"choose one of {', '.join(field.choices)}"
    if field.kind == "boolean":
        return _yes_or_no(text)
    if field.kind in ("number", "integer"):
        return _number(text, whole=field.kind == "integer")
    return text, ""


def _yes_or_no(text: str) -> tuple[bool | None, str]:
    if text.lower() in ("y", "yes", "true", "1"):
        return True, ""
    if text.lower() in ("n", "no", "false", "0"):
        return False, ""
    return None, "answer yes or no"


def _number(text: str, *, whole: bool) -> tuple[float | int | None, str]:
    try:
        return (int(text) if whole else float(text)), ""
    except ValueError:
        return None, f"type {'a whole number' if whole else 'a number'}"


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
