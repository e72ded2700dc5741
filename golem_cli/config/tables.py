"""A TOML table as the typed value ``schema.py`` declares, or every way it is not, in words.

msgspec checks each value (types, bounds, patterns: ``Meta``); this module walks the declared
types so that a problem names its key (``providers.local.timeout``) and what the value must be,
quoting the declaration's ``description``: ``KEY must be WHAT, not VALUE`` with VALUE spelled as
TOML spells it. Every problem of a file is found, in the order its keys are declared, so the
first is named and the others counted.
"""

from __future__ import annotations

import functools
import typing
from typing import Annotated, Any, TypeVar, get_args, get_origin

import msgspec
import msgspec.structs

from golem_cli.config.schema import Table

T = TypeVar("T", bound=Table)


class Problems(ValueError):
    """What is wrong with a table, each in one sentence that names the key."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(problems[0])
        self.problems = problems


def convert(cls: type[T], table: dict[str, Any]) -> T:
    """``table`` as a ``cls``; ``Problems`` when it does not fit the declaration."""
    reader = _Reader()
    value = reader.table(cls, table, (), "a table")
    if reader.problems:
        raise Problems(reader.problems)
    assert isinstance(value, cls)
    return value


class _Reader:
    def __init__(self) -> None:
        self.problems: list[str] = []

    def table(self, cls: type[Table], table: object, where: tuple[str, ...], what: str) -> Table | None:
        if not isinstance(table, dict):
            self._wrong(where, what, table)
            return None
        before = len(self.problems)
        values = self._declared(cls, table, where)
        others = {key: value for key, value in table.items() if key not in _fields(cls)}
        if others and cls.OTHERS == "refuse":
            known = ", ".join(_fields(cls))
            self.problems += [f"{_dotted((*where, key))} is not a key of {cls.NOUN} (known: {known})" for key in others]
        elif others and cls.OTHERS != "warn":
            values[cls.OTHERS] = others
        problem = "" if len(self.problems) > before else cls.problem(table)
        if problem:
            self.problems.append(f"{_dotted(where)}: {problem}" if where else problem)
        return None if len(self.problems) > before else cls(**values)

    def _declared(self, cls: type[Table], table: dict[str, Any], where: tuple[str, ...]) -> dict[str, Any]:
        """The values of the keys ``cls`` declares, each as its type; a missing required key
        is a problem."""
        fields, names = _fields(cls), _attributes(cls)
        values = {
            names[key]: self.value(tp, table[key], (*where, key), "") for key, tp in fields.items() if key in table
        }
        self.problems += [f"{_dotted((*where, name))} is missing" for name in _required(cls) if name not in table]
        return values

    def value(self, tp: Any, value: object, where: tuple[str, ...], what: str) -> Any:
        """``value`` as type ``tp``, or None with a problem recorded. ``what`` is what the
        value must be, in words, when the type does not say it itself (a list's items)."""
        tp, what = _described(tp, what)
        origin = get_origin(tp)
        if isinstance(tp, type) and issubclass(tp, Table):
            return self.table(tp, value, where, "a table")
        if origin is dict:
            return self._dict(tp, value, where, what)
        if origin is tuple:
            if not isinstance(value, list):
                self._wrong(where, what, value)
                return None
            (item,) = [arg for arg in get_args(tp) if arg is not Ellipsis]
            return tuple(self.value(item, v, (*where, str(i)), what) for i, v in enumerate(value))
        try:
            return msgspec.convert(value, tp, strict=True)
        except msgspec.ValidationError:
            self._wrong(where, what, value)
            return None

    def _dict(self, tp: Any, value: object, where: tuple[str, ...], what: str) -> dict[str, Any] | None:
        if not isinstance(value, dict):
            self._wrong(where, what, value)
            return None
        key_type, value_type = get_args(tp)
        keys, named = _described(key_type, "")
        out = {}
        for key, item in value.items():
            try:
                msgspec.convert(key, keys, strict=True)
            except msgspec.ValidationError:
                self.problems.append(f"{_dotted(where)}.{toml(key)} is not {named}")
            out[key] = self.value(value_type, item, (*where, key), what)
        return out

    def _wrong(self, where: tuple[str, ...], what: str, value: object) -> None:
        self.problems.append(f"{_dotted(where)} must be {what or 'something else'}, not {toml(value)}")


@functools.cache
def _declaration(cls: type[Table]) -> tuple[msgspec.structs.FieldInfo, ...]:
    """The fields ``cls`` declares, with their types resolved (``Annotated`` kept): read once
    per table, since resolving a class's annotations is the costly part."""
    return msgspec.structs.fields(cls)


@functools.cache
def _fields(cls: type[Table]) -> dict[str, Any]:
    """The keys a table takes from the file (as the file spells them: ``pass``, not the
    attribute ``passed``), with their declared types."""
    return {f.encode_name: f.type for f in _declaration(cls) if f.name != cls.OTHERS}


@functools.cache
def _attributes(cls: type[Table]) -> dict[str, str]:
    """Each key of the file's table, to the attribute that holds it."""
    return {f.encode_name: f.name for f in _declaration(cls)}


@functools.cache
def _required(cls: type[Table]) -> tuple[str, ...]:
    """The keys a table must have (declared without a default)."""
    return tuple(f.encode_name for f in _declaration(cls) if f.required)


def _described(tp: Any, what: str) -> tuple[Any, str]:
    """``tp`` without ``| None`` (TOML has no null: a key that is there has a value), and what
    its ``Meta`` says it must be (else ``what``). A leaf keeps its ``Meta`` for msgspec to
    check; a list or a table loses it, to be walked."""
    args = get_args(tp)
    if type(None) in args:
        rest = tuple(arg for arg in args if arg is not type(None))
        tp = rest[0] if len(rest) == 1 else typing.Union[rest]  # noqa: UP007 (a union built at run time)
    if get_origin(tp) is Annotated:
        what = next((m.description for m in tp.__metadata__ if isinstance(m, msgspec.Meta) and m.description), what)
        base = tp.__origin__
        if get_origin(base) in (tuple, dict) or (isinstance(base, type) and issubclass(base, Table)):
            tp = base
    return tp, what


def _dotted(where: tuple[str, ...]) -> str:
    return ".".join(where)


def toml(value: object) -> str:
    """A value as TOML spells it, so that the person recognises what they wrote."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return msgspec.json.encode(value).decode()  # a TOML basic string, as JSON spells it
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return str(value)
